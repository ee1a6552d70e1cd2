import { z } from 'zod';
import { MnemographError, errorMessage } from '../errors';

/**
 * Reorders recall's top candidates by how well each answers the query (a cross-encoder
 * reads query and candidate together, which a vector comparison cannot). Returns one score
 * per document, in input order, higher is better.
 */
export interface Reranker {
  score(query: string, documents: string[]): Promise<number[]>;
}

/** The rerank API's answer for `n` documents: a score for documents by their input index. */
const RerankResponse = (n: number) =>
  z.object({ results: z.array(z.object({ index: z.number().int().min(0).max(n - 1), relevance_score: z.number() })) });

/**
 * A cross-encoder behind the rerank API that Cohere defined and Jina, vLLM, Infinity and
 * LocalAI also serve: POST {baseUrl}/rerank {model, query, documents, top_n} ->
 * {results: [{index, relevance_score}]}. One request per recall, bounded by `timeoutMs`.
 */
export class HttpReranker implements Reranker {
  constructor(private readonly opts: { baseUrl: string; model: string; apiKey?: string; timeoutMs: number }) {}

  async score(query: string, documents: string[]): Promise<number[]> {
    if (documents.length === 0) return [];
    const url = `${this.opts.baseUrl.replace(/\/$/, '')}/rerank`;
    let body: unknown;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}) },
        body: JSON.stringify({ model: this.opts.model, query, documents, top_n: documents.length }),
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
      body = await res.json();
    } catch (err) {
      throw new MnemographError('RERANK_FAILED', 'upstream', `reranker at ${url} failed: ${errorMessage(err)}`);
    }
    const parsed = RerankResponse(documents.length).safeParse(body);
    if (!parsed.success) {
      throw new MnemographError('RERANK_FAILED', 'upstream', `reranker at ${url} answered with a malformed body: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    }
    const scores = new Array<number>(documents.length).fill(Number.NEGATIVE_INFINITY);
    for (const r of parsed.data.results) scores[r.index] = r.relevance_score;
    return scores;
  }
}
