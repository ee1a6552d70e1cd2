import type { Embedder } from '../embedding';
import { ValidationError } from '../errors';
import type { Logger } from '../infra/logger';

/**
 * Embedding for a write: the caller's vector (checked against the model's dimension), or
 * one computed now. Writes use background priority so they never delay queries. If the
 * embedder fails, the write still happens without a vector (`embedding_pending`), because
 * losing a fact is worse than finding it only by keyword until a retry embeds it.
 */
export async function embeddingForWrite(embedder: Embedder, log: Logger, subsystem: string, text: string, given: number[] | undefined): Promise<number[] | undefined> {
  if (given) {
    checkDimensions(embedder, given, 'embedding');
    return given;
  }
  try {
    return (await embedder.embed([text], { priority: 'background' }))[0];
  } catch (err) {
    log.warn({ subsystem, err: (err as Error).message }, 'embedding failed; stored without a vector (embedding_pending)');
    return undefined;
  }
}

/** Embedding for a query: the caller's vector or one computed at interactive priority. */
export async function embeddingForQuery(embedder: Embedder, query: string | undefined, given: number[] | undefined): Promise<number[]> {
  if (given) {
    checkDimensions(embedder, given, 'queryEmbedding');
    return given;
  }
  return (await embedder.embed([query!], { priority: 'interactive', input: 'query' }))[0]!;
}

export function checkDimensions(embedder: Embedder, vector: number[], field: string): void {
  if (vector.length !== embedder.dimensions) {
    throw new ValidationError(`invalid input: ${field} must have ${embedder.dimensions} numbers, got ${vector.length}`, { field });
  }
}
