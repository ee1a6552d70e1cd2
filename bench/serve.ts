/**
 * The service as its own process (issue #22: the first request after start, and CPU per
 * recall). `mnemograph serve` is spawned for real, as `npm start` runs it:
 *
 * 1. Cold start: one LoCoMo conversation is stored for a user through a first server process
 *    (its background embedder embeds it), which is then stopped. A second process is started
 *    with the worker, as `npm start` runs it: time until /readyz answers 200, then the first
 *    storeTurn and recall/context calls and the next ones, alternating.
 * 2. Saturation: a server without the worker; `--clients` callers ask recall/context back to
 *    back for `--seconds`: recalls/s, latency, and the CPU time each process spent per recall
 *    (the API process with its embedding threads, Neo4j, PostgreSQL, Redis; read from /proc,
 *    so the split between processes is measured, not guessed).
 *
 *   npm run bench:serve -- --clients 16 --seconds 30
 *   npm run bench:serve -- --server-root /work/wt-old   # the same bench against another checkout
 *   npm run bench:serve -- --node-args=--cpu-prof --node-args=--cpu-prof-dir=/tmp/prof
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../src/config';
import { createNeo4jDriver } from '../src/infra/neo4j';
import { createPgPool } from '../src/infra/postgres';
import { PACKAGE_ROOT as ROOT } from '../src/package-info';
import { stackDown, stackUp } from '../src/stack';
import { neo4jPaths, readPid } from '../src/stack/neo4j-process';
import { PgTenantStore } from '../src/tenancy';
import { defaultLocomoPath, loadLocomo } from './recall-datasets';
import { percentiles } from './recall-metrics';
import { MS_PER_TICK, processTicks, ticksByComm } from './proc-cpu';

interface Options {
  clients: string;
  seconds: string;
  warmSeconds: string;
  conversation: string;
  firstCalls: string;
  serverRoot: string;
  nodeArgs: string[];
  port: string;
  skipColdStart?: boolean;
  restartNeo4j?: boolean;
  knowledge?: boolean;
  out?: string;
}

async function main(): Promise<void> {
  const opts = new Command()
    .option('--clients <n>', 'concurrent recall callers at saturation', '16')
    .option('--seconds <n>', 'length of the saturation phase', '30')
    .option('--warm-seconds <n>', 'unmeasured saturation before it (Neo4j JIT-compiles for minutes after a restart: CPU per recall with --knowledge fell 123 -> 45 ms over ~6 min of load)', '5')
    .option('--conversation <i>', 'which LoCoMo conversation the user holds (its questions are asked)', '0')
    .option('--first-calls <n>', 'storeTurn and recall calls measured after the cold start, the first reported apart', '20')
    .option('--server-root <dir>', 'the checkout whose `src/cli/main.ts serve` is started', ROOT)
    .option('--node-args <arg>', 'a node flag for the server processes (repeatable, e.g. --cpu-prof)', (v: string, all: string[]) => [...all, v], [] as string[])
    .option('--port <n>', 'port of the server processes', '7391')
    .option('--skip-cold-start', 'only the saturation phase (the user is stored by a first server all the same)')
    .option('--restart-neo4j', 'restart the embedded Neo4j before the cold start (its plan cache empty, as after a deploy or a crash)')
    .option('--knowledge', 'the user also holds facts, entities, a strategy and a goal, so recall runs every source')
    .option('--out <file>', 'result file', join(ROOT, 'bench/results/serve.json'))
    .parse()
    .opts<Options>();
  const serverRoot = resolve(opts.serverRoot);
  const config = loadConfig(process.env);
  const pg = createPgPool(config.postgres.url, 1);
  const run = Date.now().toString(36);
  const tenant = `bench-serve-${run}`;
  const { key } = await new PgTenantStore(pg, 0).createKey(tenant, { name: 'bench:serve' });
  await pg.end();
  const neo4j = createNeo4jDriver(config.neo4j);
  const userId = `user-${run}`;
  const ds = loadLocomo(defaultLocomoPath());
  const conversation = ds.conversations[Number(opts.conversation)]!;
  const questions = ds.questions.filter((q) => q.conversationKey === conversation.key).map((q) => q.question);
  const base = `http://127.0.0.1:${opts.port}`;
  const api = apiClient(base, key);
  const server = (worker: boolean, label: string) => startServer(serverRoot, opts.nodeArgs, Number(opts.port), worker, label);
  const result: Record<string, unknown> = { server_root: serverRoot, machine: { cpus: cpus().length }, embedding_model: config.embedding.model };

  // The user's memory, stored and embedded through a first process.
  let srv = await server(false, 'seed');
  try {
    const t0 = performance.now();
    let turns = 0;
    for (const session of conversation.sessions) {
      const batch = session.turns.map((t, i) => ({
        userId,
        conversationId: `${userId}-${session.key}`,
        role: t.role,
        content: t.content,
        timestamp: new Date(Date.parse(session.date) + i * 1000).toISOString(),
        metadata: { speaker: t.speaker },
      }));
      await api.expect(201, 'POST', '/v1/turns/batch', { turns: batch });
      turns += batch.length;
    }
    if (opts.knowledge) await storeKnowledge(api, userId, conversation);
    // Stored turns are embedded in the background; recall is measured over embedded memory.
    while ((await neo4j.executeQuery(PENDING, {}, { database: config.neo4j.database })).records[0]!.get('n') > 0) await sleep(500);
    result.user = { turns, sessions: conversation.sessions.length, questions: questions.length, stored_and_embedded_s: Math.round((performance.now() - t0) / 100) / 10 };
  } finally {
    await srv.stop();
  }

  if (!opts.skipColdStart) {
    // 2. Cold start, with the worker, as `npm start` runs the service; after a Neo4j restart
    // when asked (an empty plan cache: every statement is planned by its first caller).
    if (opts.restartNeo4j) {
      await stackDown(ROOT, config);
      await stackUp(ROOT, config, () => undefined);
    }
    srv = await server(true, 'cold');
    try {
      const conversationId = `${userId}-live`;
      const said = conversation.sessions.flatMap((session) => session.turns);
      const store: number[] = [];
      const recall: number[] = [];
      // Stage timings (the recall bundle's, summed in /metrics) of the first calls.
      const stages: Array<Record<string, number>> = [];
      let sums = await recallStageSums(base);
      for (let i = 0; i < Number(opts.firstCalls); i++) {
        let s = performance.now();
        await api.expect(201, 'POST', '/v1/turns', { userId, conversationId, role: 'user', content: `A new thought, number ${i}: ${said[i % said.length]!.content}` });
        store.push(performance.now() - s);
        s = performance.now();
        await api.expect(200, 'POST', '/v1/recall/context', { userId, query: questions[i % questions.length], topK: 10 });
        recall.push(performance.now() - s);
        if (i < 3) {
          const now = await recallStageSums(base);
          const took: Record<string, number> = {};
          for (const [stage, seconds] of Object.entries(now)) if (seconds > (sums[stage] ?? 0)) took[stage] = Math.round((seconds - (sums[stage] ?? 0)) * 10_000) / 10;
          stages.push(took);
          sums = now;
        }
      }
      const round = (x: number) => Math.round(x * 10) / 10;
      result.cold_start = {
        neo4j_restarted: opts.restartNeo4j === true,
        user_holds: opts.knowledge ? 'turns, facts, entities, a strategy, a goal' : 'turns',
        ready_after_ms: srv.readyAfterMs,
        first_store_turn_ms: round(store[0]!),
        first_recall_context_ms: round(recall[0]!),
        first_recalls_stages_ms: stages,
        next_store_turn_ms: percentiles(store.slice(1)),
        next_recall_context_ms: percentiles(recall.slice(1)),
        budgets_ms: { first_request: 100, store_turn_p95: 25, recall_p95: 50 },
        note: '`serve --worker` started after the user was stored; calls alternate storeTurn and recall/context, one at a time; the worker runs its jobs meanwhile',
      };
    } finally {
      await srv.stop();
    }
  }

  // 3. Saturation, without the worker: what the API, Neo4j and PostgreSQL spend per recall.
  srv = await server(false, 'saturation');
  try {
    const clients = Number(opts.clients);
    const load = async (ms: number) => {
      const lat: number[] = [];
      let errors = 0;
      const end = Date.now() + ms;
      await Promise.all(
        Array.from({ length: clients }, async (_, c) => {
          for (let i = c; Date.now() < end; i += clients) {
            const s = performance.now();
            const r = await api.call('POST', '/v1/recall/context', { userId, query: questions[i % questions.length], topK: 10 });
            lat.push(performance.now() - s);
            if (r.status !== 200) errors++;
          }
        }),
      );
      return { lat, errors };
    };
    await load(Number(opts.warmSeconds) * 1000); // warm: JIT, query plans, pools at their working size
    const processes = cpuSources(config, srv.pid);
    const before = processes.map((p) => p.ticks());
    const t0 = performance.now();
    const { lat, errors } = await load(Number(opts.seconds) * 1000);
    const seconds = (performance.now() - t0) / 1000;
    const after = processes.map((p) => p.ticks());
    const cpuMsPerRecall = Object.fromEntries(processes.map((p, i) => [p.name, Math.round((((after[i]! - before[i]!) * MS_PER_TICK) / lat.length) * 100) / 100]));
    result.saturation = {
      clients,
      seconds: Math.round(seconds),
      warm_seconds: Number(opts.warmSeconds),
      recalls: lat.length,
      errors,
      recalls_per_second: Math.round((lat.length / seconds) * 10) / 10,
      recall_context_ms: percentiles(lat),
      cpu_ms_per_recall: { ...cpuMsPerRecall, total: Math.round(Object.values(cpuMsPerRecall).reduce((a, b) => a + b, 0) * 100) / 100 },
      note: 'recall/context, topK 10, LoCoMo questions of the stored conversation in turn; CPU is utime + stime from /proc over the measured seconds (the bench process itself is not counted)',
    };
    await api.expect(200, 'DELETE', `/v1/users/${encodeURIComponent(userId)}`);
  } finally {
    await srv.stop();
    await neo4j.close();
  }
  console.log(JSON.stringify(result, null, 2));
  mkdirSync(dirname(opts.out!), { recursive: true });
  writeFileSync(opts.out!, JSON.stringify(result, null, 2) + '\n');
}

// -> {n}: turns of any user still waiting for their embedding
const PENDING = 'MATCH (t:Turn) WHERE t.embedding_pending = true RETURN count(t) AS n';

interface Server {
  pid: number;
  readyAfterMs: number;
  stop(): Promise<void>;
}

/** Starts `serve` from `root` (TypeScript through tsx, as `npm start`), resolves once /readyz answers 200. */
async function startServer(root: string, nodeArgs: string[], port: number, worker: boolean, label: string): Promise<Server> {
  const log = openSync(`/tmp/bench-serve-${label}.log`, 'w');
  const t0 = performance.now();
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', join(root, 'src/cli/main.ts'), 'serve', '--port', String(port), ...(worker ? ['--worker'] : [])], {
    cwd: root,
    env: { ...process.env, API_RATE_LIMIT_PER_MINUTE: '1000000' },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the ${label} server exited (${child.exitCode}); see /tmp/bench-serve-${label}.log`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) break;
    await sleep(20);
  }
  return {
    pid: child.pid!,
    readyAfterMs: Math.round(performance.now() - t0),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Knowledge of the user as an agent would have stored it: a fact for each of the first turns
 * (the turn's words as the claim), an entity per speaker, a strategy and a goal.
 */
async function storeKnowledge(api: ReturnType<typeof apiClient>, userId: string, conversation: ReturnType<typeof loadLocomo>['conversations'][number]): Promise<void> {
  const said = conversation.sessions.flatMap((s) => s.turns);
  for (const speaker of new Set(said.map((t) => t.speaker)))
    await api.expect(201, 'POST', '/v1/entities', { userId, name: speaker, type: 'person', description: `${speaker}, who speaks in the conversation` });
  for (const t of said.slice(0, 20)) await api.expect(201, 'POST', '/v1/facts', { userId, claim: `${t.speaker} said: ${t.content}`, source: 'agent' });
  await api.expect(201, 'POST', '/v1/strategies', { userId, description: 'Ask about the family before giving advice', contextPattern: 'advice on personal matters', toolSequence: ['recall'] });
  await api.expect(201, 'POST', '/v1/goals', { userId, description: 'Help plan the next support group meeting', priority: 6 });
}

function apiClient(base: string, key: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };
  return {
    call,
    async expect(status: number, method: string, path: string, body?: unknown) {
      const r = await call(method, path, body);
      if (r.status !== status) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 500)}`);
      return r;
    },
  };
}

/** CPU clock ticks (utime + stime) of the processes that serve a recall. */
function cpuSources(config: ReturnType<typeof loadConfig>, apiPid: number): Array<{ name: string; ticks: () => number }> {
  const neo4jPid = readPid(neo4jPaths(ROOT, config));
  return [
    { name: 'api', ticks: () => processTicks(apiPid) },
    ...(neo4jPid ? [{ name: 'neo4j', ticks: () => processTicks(neo4jPid) }] : []),
    { name: 'postgres', ticks: () => ticksByComm('postgres') },
    { name: 'redis', ticks: () => ticksByComm('redis-server') },
  ];
}

/** Per stage, the seconds recalls have taken so far (the server's mnemograph_recall_stage_seconds sums). */
async function recallStageSums(base: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const sums: Record<string, number> = {};
  for (const m of text.matchAll(/^mnemograph_recall_stage_seconds_sum\{stage="([^"]+)"\} (\S+)$/gm)) sums[m[1]!] = Number(m[2]);
  return sums;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
