/**
 * Access counts (`access_count`, `last_accessed`) on recalled nodes: a ranking hint written in
 * batches off the request path (src/retrieval/reinforcement.ts). Each owning store runs the
 * write for its labels through `addAccessCountsCypher`.
 */

/** One node's accesses since the last write: `n` recalls, the latest at `at`; it must be `userId`'s. */
export interface AccessCount {
  id: string;
  userId: string;
  n: number;
  at: string;
}

/**
 * The write for nodes of `label` (labels cannot be parameters): $rows: [AccessCount] -> {n},
 * the nodes touched. The user check keeps a forged id from touching someone else's node;
 * `last_accessed` only moves forward.
 */
export function addAccessCountsCypher(label: string): string {
  return `
UNWIND $rows AS r
MATCH (n:${label} {id: r.id}) USING INDEX SEEK n:${label}(id) WHERE n.user_id = r.userId
SET n.access_count = coalesce(n.access_count, 0) + r.n,
    n.last_accessed = CASE WHEN n.last_accessed IS NULL OR n.last_accessed < datetime(r.at) THEN datetime(r.at) ELSE n.last_accessed END
RETURN count(n) AS n`;
}
