import type { Embedder } from '../embedding';
import { turnEmbeddingText } from '../episodic';
import type { CypherRunner } from '../infra/neo4j';
import { recordEmbeddingModel } from './neo4j-migrator';

const TAG = (op: string) => ({ subsystem: 'reindex', op });

/**
 * What each embedded label is embedded from: the same text its subsystem embeds on write
 * (see semantic-memory, procedural-memory, goal-memory, episodic prepare). Re-embedding is
 * schema work, like a backfill: it rewrites the `embedding` property under the vector indexes.
 */
const EMBEDDED_TEXT: Record<string, string> = {
  Turn: turnEmbeddingText('n'),
  Fact: 'n.claim',
  Entity: "reduce(s = n.name, a IN coalesce(n.aliases, []) | s + ', ' + a) + CASE WHEN coalesce(n.description, '') = '' THEN '' ELSE ': ' + n.description END",
  Strategy:
    "reduce(s = coalesce(n.description, ''), p IN [coalesce(n.context_pattern, ''), reduce(t = '', x IN coalesce(n.tool_sequence, []) | t + CASE WHEN t = '' THEN '' ELSE ' ' END + x)] | CASE WHEN p = '' THEN s ELSE s + '\\n' + p END)",
  Goal: 'n.description',
};

// Everyone's nodes of the label, or one user's ($userId; a plain equality, so the user_id index serves it).
const OWNED = (label: string, oneUser: boolean) => `MATCH (n:\`${label}\`) WHERE ${oneUser ? 'n.user_id = $userId AND ' : ''}${EMBEDDED_TEXT[label]} IS NOT NULL`;
// [$userId] -> {n}: nodes of the label that have text to embed
const COUNT = (label: string, oneUser: boolean) => `${OWNED(label, oneUser)} RETURN count(n) AS n`;
// [$userId], $after, $limit -> {id, text}: the next page by element id order (stable while we only set properties)
const PAGE = (label: string, oneUser: boolean) =>
  `${OWNED(label, oneUser)} AND elementId(n) > $after
   RETURN elementId(n) AS id, ${EMBEDDED_TEXT[label]} AS text ORDER BY id LIMIT toInteger($limit)`;
// $rows: [{id, embedding}] -> nothing; clears the pending flag the background embedders use and
// stamps `embedded_at` (processes holding turn embeddings in memory read the new ones, src/infra/owner-vectors)
const SET = `UNWIND $rows AS row MATCH (n) WHERE elementId(n) = row.id
  CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
  SET n.embedding_pending = null, n.embedded_at = timestamp()`;

/** Re-embeds every embedded node with `embedder`, label by label, reporting progress; a full run (no `userId`) then moves the model lock. */
export async function reindexAll(
  neo4j: CypherRunner,
  embedder: Embedder,
  onProgress: (label: string, done: number, total: number) => void,
  opts: { batch?: number; userId?: string } = {},
): Promise<Record<string, number>> {
  const batch = opts.batch ?? 64;
  const userId = opts.userId ?? null;
  const done: Record<string, number> = {};
  for (const label of Object.keys(EMBEDDED_TEXT)) {
    const total = (await neo4j.read<{ n: number }>(COUNT(label, userId !== null), { userId }, TAG('count')))[0]?.n ?? 0;
    let after = '';
    let n = 0;
    onProgress(label, 0, total);
    for (;;) {
      const page = await neo4j.read<{ id: string; text: string }>(PAGE(label, userId !== null), { userId, after, limit: batch }, TAG('page'));
      if (page.length === 0) break;
      const vectors = await embedder.embed(
        page.map((p) => p.text || ' '),
        { priority: 'background' },
      );
      await neo4j.write(SET, { rows: page.map((p, i) => ({ id: p.id, embedding: vectors[i] })) }, TAG('set'));
      after = page[page.length - 1]!.id;
      n += page.length;
      onProgress(label, n, total);
    }
    done[label] = n;
  }
  // One user's reindex (repair) leaves the model lock alone; a full one moves it.
  if (userId === null) await recordEmbeddingModel(neo4j, embedder);
  return done;
}
