import { MnemographError, errorMessage } from '../errors';

/**
 * Reorders recall's top candidates by how well each answers the query (a cross-encoder
 * reads query and candidate together, which a vector comparison cannot). Returns one score
 * per document, in input order, higher is better.
 */
export interface Reranker {
  readonly name: string;
  score(query: string, documents: string[]): Promise<number[]>;
}

/**
 * A cross-encoder behind the rerank API that Cohere defined and Jina, vLLM, Infinity and
 * LocalAI also serve: POST {baseUrl}/rerank {model, query, documents, top_n} ->
 * {results: [{index, relevance_score}]}. One request per recall, bounded by `timeoutMs`.
 */
export class HttpReranker implements Reranker {
  readonly name: string;

  constructor(private readonly opts: { baseUrl: string; model: string; apiKey?: string; timeoutMs: number }) {
    this.name = `http:${opts.model}`;
  }

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
    const results = (body as { results?: Array<{ index?: unknown; relevance_score?: unknown }> }).results;
    if (!Array.isArray(results)) throw new MnemographError('RERANK_FAILED', 'upstream', `reranker at ${url} answered without a results list`);
    const scores = new Array<number>(documents.length).fill(Number.NEGATIVE_INFINITY);
    for (const r of results) {
      if (typeof r.index !== 'number' || typeof r.relevance_score !== 'number' || r.index < 0 || r.index >= documents.length) {
        throw new MnemographError('RERANK_FAILED', 'upstream', `reranker at ${url} answered with a malformed result ${JSON.stringify(r).slice(0, 100)}`);
      }
      scores[r.index] = r.relevance_score;
    }
    return scores;
  }
}
