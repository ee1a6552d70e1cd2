import OpenAI from 'openai';
import { MnemographError, errorMessage } from '../errors';
import type { Embedder } from './contract';

/**
 * OpenAI embeddings (`text-embedding-3-small` by default) through the official SDK; with a
 * base URL it talks to any server that speaks the same API (provider `openai-compatible`).
 */
export class OpenAIEmbedder implements Embedder {
  private readonly client: OpenAI;

  constructor(
    readonly provider: 'openai' | 'openai-compatible',
    readonly model: string,
    readonly dimensions: number,
    opts: { apiKey?: string; baseUrl?: string; maxRetries?: number },
  ) {
    this.client = new OpenAI({ apiKey: opts.apiKey ?? 'not-needed', baseURL: opts.baseUrl, maxRetries: opts.maxRetries ?? 2, timeout: 30_000 });
  }

  async embed(texts: string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    let res: OpenAI.Embeddings.CreateEmbeddingResponse;
    try {
      res = await this.client.embeddings.create({
        model: this.model,
        input: texts.map((t) => (t.trim() === '' ? ' ' : t)),
        // Only the text-embedding-3 family accepts a dimension; others return their native size.
        ...(this.model.startsWith('text-embedding-3') ? { dimensions: this.dimensions } : {}),
        encoding_format: 'float',
      });
    } catch (err) {
      throw new MnemographError('EMBEDDING_FAILED', 'upstream', `${this.provider} embeddings (${this.model}) failed: ${errorMessage(err)}`, {}, { cause: err });
    }
    const vectors = [...res.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
    const wrong = vectors.find((v) => v.length !== this.dimensions);
    if (vectors.length !== texts.length || wrong) {
      throw new MnemographError(
        'EMBEDDING_FAILED',
        'upstream',
        `${this.provider} returned ${vectors.length} vectors of ${wrong?.length ?? this.dimensions} dimensions for ${texts.length} texts; expected ${this.dimensions}-d (fix EMBEDDING_DIMENSIONS)`,
      );
    }
    return vectors;
  }

  async close(): Promise<void> {}
}
