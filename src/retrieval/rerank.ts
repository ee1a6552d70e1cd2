import { z } from 'zod';
import { MnemographError, errorMessage } from '../errors';
import type { TextGenerator } from './contract';

/**
 * Reorders recall's top candidates by how well each answers the query (a cross-encoder
 * reads query and candidate together, which a vector comparison cannot). Returns one score
 * per document, in input order, higher is better.
 */
export interface Reranker {
  /** `userId`: whose request it serves, for a usage record. */
  score(query: string, documents: string[], opts?: { userId?: string }): Promise<number[]>;
}

/** The rerank API's answer for `n` documents: a score for documents by their input index. */
const RerankResponse = (n: number) =>
  z.object({
    results: z.array(
      z.object({
        index: z
          .number()
          .int()
          .min(0)
          .max(n - 1),
        relevance_score: z.number(),
      }),
    ),
  });

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

/** Longest candidate text shown to an LLM reranker (the prompt holds RECALL_RERANK_DEPTH of them). */
const LLM_RERANK_CHARS = 300;

/**
 * The recall LLM as a reranker, for when no cross-encoder is configured: it reads the
 * question and the numbered candidates and answers their numbers, best first. Listed
 * candidates score by position (1 for the first), unlisted ones keep their fused order below
 * them. An answer naming no candidate is an error, so recall keeps its fused order.
 */
export class LlmReranker implements Reranker {
  constructor(private readonly generator: TextGenerator) {}

  async score(query: string, documents: string[], opts: { userId?: string } = {}): Promise<number[]> {
    if (documents.length === 0) return [];
    const listed = documents.map((d, i) => `[${i + 1}] ${d.length > LLM_RERANK_CHARS ? `${d.slice(0, LLM_RERANK_CHARS)}…` : d}`).join('\n');
    const answer = await this.generator.generate(
      'Rank the messages by how well each helps answer the question. Reply with the message numbers, best first, ' +
        `comma-separated, and nothing else; leave out messages that do not help.\nQuestion: ${query}\n${listed}`,
      { maxTokens: 8 + documents.length * 4, userId: opts.userId },
    );
    const order = rankedIndexes(answer, documents.length);
    if (order.length === 0) throw new MnemographError('RERANK_FAILED', 'upstream', `the recall LLM named no candidate: "${answer.slice(0, 80)}"`);
    const n = documents.length;
    const scores = documents.map((_, i) => -(i + 1) / (n + 1)); // unlisted: below every listed one, fused order kept
    order.forEach((index, position) => (scores[index] = 1 - position / n));
    return scores;
  }
}

/** The distinct candidate numbers (1-based in the text) an answer names, in order, as 0-based indexes. */
export function rankedIndexes(answer: string, n: number): number[] {
  const seen = new Set<number>();
  for (const m of answer.matchAll(/\d+/g)) {
    const i = Number(m[0]) - 1;
    if (i >= 0 && i < n) seen.add(i);
  }
  return [...seen];
}
