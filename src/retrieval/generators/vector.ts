import type { CandidateGenerator } from '../turn-pipeline';

/**
 * Vector candidates: the scope's turns nearest to the query embedding (`turn_embeddings`;
 * the store widens or scans exactly when the index reaches too few of the user's turns, and
 * returns up to twice the candidates). Signal `vector`; weight RECALL_VECTOR_WEIGHT when
 * another list found something, else 1. Settings: RECALL_VECTOR, RECALL_VECTOR_WEIGHT.
 */
export const vectorGenerator: CandidateGenerator = {
  signal: 'vector',
  usesEmbedding: true,
  enabled: (r) => r.tech.vector,
  weight: (r, lists) => ([...lists].some(([signal, hits]) => signal !== 'vector' && hits.length > 0) ? r.settings.vectorWeight : 1),
  search: (r, embedding) => r.deps.episodic.similarTurns(embedding!, r.scope, { ...r.window, limit: r.candidates }),
};
