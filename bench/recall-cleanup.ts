import type { Mnemograph } from '../src/container';
import { PgTurnLog } from '../src/episodic';
import { emptyErasureReport, Neo4jUserGraph } from '../src/tenancy';
import { PgJobStore } from '../src/worker';

// $userId -> {n}: deletes one batch of a benchmark user's turns
const DELETE_TURNS = `MATCH (t:Turn) WHERE t.user_id = $userId WITH t LIMIT 5000 DETACH DELETE t RETURN count(*) AS n`;

/**
 * Removes the benchmark's own users (by their run-specific ids) from Neo4j and Postgres: their
 * turns in large batches, then every other node they own (conversations, and the facts and
 * entities a consolidating bench learned) as forget-user finds them, then their turn-log and
 * timeline rows and consolidation ledger. A ledger left behind made the next run of a fixed
 * user id (the latency bench's) skip what it had learned before: 0 facts and 312 entities
 * instead of 156 and 1,425 for the same 5,000 turns.
 */
export async function deleteUsers(m: Mnemograph, userIds: string[]): Promise<void> {
  const tag = { subsystem: 'bench', op: 'cleanup' };
  const graph = new Neo4jUserGraph(m.neo4j);
  // The Postgres rows a bench writes, erased by their owners' parts as forget-user erases them.
  const pgParts = [new PgTurnLog(m.pg.primary).userData(), new PgJobStore(m.pg.primary).userData()];
  for (const userId of userIds) {
    while (((await m.neo4j.write<{ n: number }>(DELETE_TURNS, { userId }, tag))[0]?.n ?? 0) > 0);
    const report = emptyErasureReport(userId);
    await graph.erase(userId, report);
    for (const part of pgParts) await part.erase(userId, report);
  }
}
