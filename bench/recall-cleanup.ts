import type { Mnemograph } from '../src/container';

// $userId -> {n}: deletes one batch of a benchmark user's turns (and then conversations)
const DELETE_TURNS = `MATCH (t:Turn) WHERE t.user_id = $userId WITH t LIMIT 5000 DETACH DELETE t RETURN count(*) AS n`;
const DELETE_REST = `MATCH (c:Conversation) WHERE c.user_id = $userId DETACH DELETE c WITH count(*) AS n MATCH (u:User {id: $userId}) DETACH DELETE u RETURN n`;

/** Removes the benchmark's own users (by their run-specific ids) from Neo4j and Postgres. */
export async function deleteUsers(m: Mnemograph, userIds: string[]): Promise<void> {
  const tag = { subsystem: 'bench', op: 'cleanup' };
  for (const userId of userIds) {
    while (((await m.neo4j.write<{ n: number }>(DELETE_TURNS, { userId }, tag))[0]?.n ?? 0) > 0);
    await m.neo4j.write(DELETE_REST, { userId }, tag);
    await m.pg.primary.query('DELETE FROM conversation_logs WHERE user_id = $1', [userId]);
  }
}
