import { INTERNAL_USER } from '../access';
import type { Mnemograph } from '../container';
import { errorMessage } from '../errors';

/** What warming up took, per part (ms), and what failed (a failed part leaves the service usable, only colder). */
export interface WarmUpReport {
  ms: number;
  parts: Record<string, number>;
  failed: Record<string, string>;
}

/** Concurrent embed calls: at least the local embedder's thread count (2 by default). */
const EMBED_CALLS = 4;
const WARM_UP_QUERIES = [
  'what does the user like?',
  'When did Caroline go to the LGBTQ support group?',
  'How many times did we meet in May 2023, two weeks ago, last Friday at 5pm or on 3/14?',
  'What did Melanie paint after her trip during the summer of 2022?',
];

/**
 * Makes the first request after start as fast as the next ones: loads the embedding model
 * in every worker thread (concurrent interactive embeds), opens connections in the Neo4j and
 * PostgreSQL pools (parallel trivial queries) and has Neo4j plan storeTurn's statements (a
 * write rolled back) and recall's queries (remember over a user with no memory, then over a
 * made-up memory that is erased again: `rehearseRecall`, which also formats what it recalled
 * as recall/context does), and with `http` the server's own first-request work. The API's
 * /readyz answers 503 (`warming`) until it finished. Never throws: a part that fails is
 * reported and the service starts colder.
 */
export async function warmUp(m: Mnemograph, opts: { connections?: number; http?: () => Promise<void> } = {}): Promise<WarmUpReport> {
  const connections = opts.connections ?? 4;
  const t0 = performance.now();
  const parts: Record<string, number> = {};
  const failed: Record<string, string> = {};
  const part = async (name: string, work: () => Promise<unknown>) => {
    const s = performance.now();
    try {
      await work();
    } catch (err) {
      failed[name] = errorMessage(err);
    }
    parts[name] = Math.round(performance.now() - s);
  };
  const n = Math.min(connections, m.config.postgres.poolSize);
  await Promise.all([
    // Concurrent calls, so that every embedding thread loads its model now (a local embedder's
    // threads load on their first text; a query landing on a cold one waited 300 ms).
    part('embedder', () => Promise.all(Array.from({ length: EMBED_CALLS }, (_, i) => m.embedder.embed([`warming up the embedding model (${i})`], { priority: 'interactive' })))),
    part('postgres_pool', () => Promise.all(Array.from({ length: n }, () => m.pg.primary.query('SELECT 1')))),
    part('neo4j_pool', () => Promise.all(Array.from({ length: connections }, () => m.neo4j.read('RETURN 1 AS one', {}, { subsystem: 'api', op: 'warmUp' })))),
    // The server's own first-request work (its JSON body parser's decoders), when there is a server.
    ...(opts.http ? [part('http', opts.http)] : []),
  ]);
  // storeTurn's statements planned and its path run, in a transaction that is rolled back.
  await part('store', () => m.memory.rehearseStore(INTERNAL_USER));
  // After the embedder is up: the recall pipeline end to end (query plans, the code's own JIT).
  // Questions of several shapes: the date parser (chrono) compiles its patterns on first use,
  // which cost a "When did...?" question 300 ms when only a plain question had warmed it.
  await part('recall', async () => {
    for (const query of WARM_UP_QUERIES) await m.memory.remember({ userId: INTERNAL_USER, query, topK: 5 });
  });
  // Recall over a made-up memory (written, recalled, erased): every source and the
  // hydration run over rows, which plans what the first real recall would otherwise plan.
  await part('recall_over_memory', () => m.memory.rehearseRecall(INTERNAL_USER));
  return { ms: Math.round(performance.now() - t0), parts, failed };
}
