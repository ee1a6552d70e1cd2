import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/config';
import { createMnemograph, type Mnemograph } from '../../src/container';
import { startServer, type RunningServer } from '../../src/api/server';
import { TenantNamespace } from '../../src/access';
import type { StoreControl } from './stores';

/*
 * The fault and load suite's scenarios (issue #22), over HTTP as an outsider calls the
 * service: store restarts under concurrent writers with an acknowledged-write ledger checked
 * afterwards in Neo4j, PostgreSQL and the audit log; 50 clients of mixed recall and writes;
 * forget-user racing writers. Each returns plain figures (bench/results/faults.json).
 */

/** The service under test: the real container and HTTP server, one tenant and its key. */
export interface Service {
  m: Mnemograph;
  srv: RunningServer;
  url: string;
  tenantId: string;
  key: string;
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function openService(env: Record<string, string>): Promise<Service> {
  const config = loadConfig({
    ...process.env,
    LOG_LEVEL: process.env.FAULTS_LOG_LEVEL ?? 'silent',
    MIGRATE_ON_START: 'true',
    AUDIT_LEVEL: 'writes',
    API_RATE_LIMIT_PER_MINUTE: '1000000',
    ...env,
  });
  const m = await createMnemograph(config);
  const srv = await startServer(m, { port: 0 });
  const tenantId = `faults-${randomUUID().slice(0, 8)}`;
  const { key } = await srv.api.tenants.createKey(tenantId, { name: 'fault suite' });
  const call = async (method: string, path: string, body?: unknown) => {
    try {
      const res = await fetch(srv.url + path, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      return { status: res.status, body: parsed };
    } catch (err) {
      // No answer at all (connection refused or reset, timeout): status 0.
      return { status: 0, body: { error: { message: (err as Error).message } } };
    }
  };
  return {
    m,
    srv,
    url: srv.url,
    tenantId,
    key,
    call,
    async close() {
      await srv.close();
      await m.close();
    },
  };
}

interface Sent {
  /** When the answer came. */
  at: number;
  /** When the request was sent. */
  sentAt: number;
  status: number;
  /** The error code and message of a 5xx other than 503 (what to fix). */
  error?: string;
}

/** One acknowledged turn: what the caller was told is stored. */
export interface Acked {
  userId: string;
  conversationId: string;
  index: number;
  id: string;
}

function histogram(statuses: number[]): Record<string, number> {
  const h: Record<string, number> = {};
  for (const s of statuses) h[String(s)] = (h[String(s)] ?? 0) + 1;
  return h;
}

const is5xxNot503 = (s: number) => s >= 500 && s !== 503;
/** Worth recording why: a 5xx other than 503, or no answer at all (status 0). */
const isFailure = (s: number) => is5xxNot503(s) || s === 0;

/**
 * `writers` concurrent clients, each storing turns of its own conversation with explicit
 * indexes and retrying a turn (every 100 ms) until it is acknowledged, as a careful client
 * does; runs until `stop()`. Every request is recorded, every acknowledgement ledgered.
 */
function startWriters(svc: Service, writers: number, tag: string) {
  const sent: Sent[] = [];
  const ledger: Acked[] = [];
  let stopped = false;
  const loops = Array.from({ length: writers }, async (_, w) => {
    const userId = `${tag}-w${w}`;
    const conversationId = `${tag}-c${w}`;
    for (let index = 0; !stopped; index++) {
      for (;;) {
        const sentAt = Date.now();
        const r = await svc.call('POST', '/v1/turns', { userId, conversationId, index, role: index % 2 ? 'assistant' : 'user', content: `writer ${w} turn ${index} of ${tag}` });
        sent.push({ at: Date.now(), sentAt, status: r.status, ...(isFailure(r.status) ? { error: `${r.body?.error?.code}: ${r.body?.error?.message}` } : {}) });
        if (r.status === 200 || r.status === 201) {
          ledger.push({ userId, conversationId, index, id: r.body.turn.id as string });
          break;
        }
        if (stopped) break;
        await new Promise((res) => setTimeout(res, 100));
      }
    }
  });
  return {
    sent,
    ledger,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/**
 * `readers` concurrent clients reading the conversations of the first writers (a Neo4j read)
 * every 100 ms until stopped; every request is recorded.
 */
function startReaders(svc: Service, readers: number, tag: string) {
  const sent: Sent[] = [];
  let stopped = false;
  const loops = Array.from({ length: readers }, async (_, r) => {
    while (!stopped) {
      const sentAt = Date.now();
      const res = await svc.call('GET', `/v1/users/${tag}-w${r}/conversations/${tag}-c${r}`);
      sent.push({ at: Date.now(), sentAt, status: res.status, ...(isFailure(res.status) ? { error: `${res.body?.error?.code}: ${res.body?.error?.message}` } : {}) });
      await new Promise((done) => setTimeout(done, 100));
    }
  });
  return {
    sent,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** p50 and max of the latencies of these requests, in ms. */
function latency(sent: Sent[]): { n: number; p50: number | null; max: number | null } {
  const ms = sent.map((s) => s.at - s.sentAt).sort((a, b) => a - b);
  return { n: ms.length, p50: ms.length ? ms[Math.floor(ms.length / 2)]! : null, max: ms.length ? ms[ms.length - 1]! : null };
}

/**
 * What callers saw while the store was away (sent after it was stopped, answered before it was
 * started again): statuses, latency, and how long after the stop the first 503 came.
 */
function duringOutage(sent: Sent[], t: { stop: number; start: number }) {
  const during = sent.filter((s) => s.sentAt >= t.stop && s.at < t.start);
  const first503 = sent.find((s) => s.status === 503 && s.at >= t.stop);
  return {
    statuses: histogram(during.map((s) => s.status)),
    latency_ms: latency(during),
    first_503_after_stop_ms: first503 ? first503.at - t.stop : null,
  };
}

/** /readyz every 250 ms until stopped. */
function sampleReadiness(svc: Service) {
  const samples: Array<{ at: number; status: number; redisDegraded: boolean }> = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const at = Date.now();
      type Body = { stores?: { redis?: { degraded?: boolean } } };
      const r: { status: number; body: Body } = await fetch(`${svc.url}/readyz`, { signal: AbortSignal.timeout(10_000) }).then(
        async (res) => ({ status: res.status, body: (await res.json()) as Body }),
        () => ({ status: 0, body: {} }),
      );
      samples.push({ at, status: r.status, redisDegraded: r.body.stores?.redis?.degraded === true });
      await new Promise((res) => setTimeout(res, 250));
    }
  })();
  return {
    samples,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** Whether each acknowledged turn is in Neo4j, has its Postgres row and exactly one audit row. */
export async function checkLedger(m: Mnemograph, tenantId: string, ledger: Acked[]) {
  const ns = new TenantNamespace(tenantId);
  const ids = ledger.map((a) => `${tenantId}.${a.id}`);
  const users = [...new Set(ledger.map((a) => ns.toInternal(a.userId, 'userId')))];
  await m.audit.flush();
  const inNeo4j = new Set((await m.neo4j.read<{ id: string }>('MATCH (t:Turn) WHERE t.id IN $ids RETURN t.id AS id', { ids }, { subsystem: 'faults', op: 'ledger' })).map((r) => r.id));
  const inPg = new Set((await m.pg.primary.query<{ turn_id: string }>('SELECT turn_id FROM conversation_logs WHERE turn_id = ANY($1)', [ids])).rows.map((r) => r.turn_id));
  const audits = new Map<string, number>();
  const rows = await m.pg.primary.query<{ id: string; n: number }>(
    "SELECT a AS id, count(*)::int AS n FROM memory_audit_log, unnest(affected_ids) a WHERE operation IN ('store', 'import') AND user_id = ANY($1) AND a = ANY($2) GROUP BY a",
    [users, ids],
  );
  for (const r of rows.rows) audits.set(r.id, r.n);
  // Turns of these users Neo4j holds without their row, acknowledged or not (half writes).
  const all = await m.neo4j.read<{ id: string }>('MATCH (t:Turn) WHERE t.user_id IN $users RETURN t.id AS id', { users }, { subsystem: 'faults', op: 'ledger' });
  const allRows = new Set((await m.pg.primary.query<{ turn_id: string }>('SELECT turn_id FROM conversation_logs WHERE user_id = ANY($1)', [users])).rows.map((r) => r.turn_id));
  return {
    acknowledged: ids.length,
    lost_in_neo4j: ids.filter((id) => !inNeo4j.has(id)).length,
    without_postgres_row: ids.filter((id) => !inPg.has(id)).length,
    without_audit_row: ids.filter((id) => !audits.has(id)).length,
    audited_more_than_once: ids.filter((id) => (audits.get(id) ?? 0) > 1).length,
    turns_in_neo4j_without_row: all.filter((t) => !allRows.has(t.id)).length,
  };
}

/**
 * One store outage under `writers` concurrent writers: `beforeMs` of normal traffic, the
 * store stopped, `downMs` later started again, `afterMs` more; then the ledger is checked.
 */
export async function outage(svc: Service, store: StoreControl, opts: { writers: number; beforeMs: number; downMs: number; afterMs: number }) {
  const tag = `${store.name}-${randomUUID().slice(0, 6)}`;
  const writers = startWriters(svc, opts.writers, tag);
  const readers = startReaders(svc, 2, tag);
  const ready = sampleReadiness(svc);
  let t = { stop: 0, stopped: 0, start: 0, started: 0 };
  try {
    await sleep(opts.beforeMs);
    t.stop = Date.now();
    await store.stop();
    t.stopped = Date.now();
    await sleep(opts.downMs);
  } finally {
    t.start = Date.now();
    await store.start();
    t.started = Date.now();
  }
  // Recovered once a write sent after the store is back is acknowledged.
  const ackAfter = () => writers.sent.find((s) => s.at >= t.started && (s.status === 200 || s.status === 201));
  const recoverDeadline = Date.now() + 120_000;
  while (!ackAfter() && Date.now() < recoverDeadline) await sleep(50);
  const recovered = ackAfter();
  await sleep(opts.afterMs);
  await writers.stop();
  await readers.stop();
  await ready.stop();
  t = { ...t };

  // /readyz during the outage (after its 2 s probe timeout) and after recovery (a second on).
  const down = ready.samples.filter((s) => s.at >= t.stopped + 2_500 && s.at < t.start);
  const after = ready.samples.filter((s) => recovered && s.at >= recovered.at + 1_000);
  const truthDown = (s: { status: number; redisDegraded: boolean }) => (store.name === 'redis' ? s.status === 200 && s.redisDegraded : s.status === 503);
  const truthUp = (s: { status: number; redisDegraded: boolean }) => s.status === 200 && !s.redisDegraded;
  const during = writers.sent.filter((s) => s.at >= t.stop && s.at < t.started);
  return {
    store: store.name,
    writers: opts.writers,
    outage_ms: t.started - t.stop,
    requests_sent: writers.sent.length,
    statuses: histogram(writers.sent.map((s) => s.status)),
    status_5xx_not_503: writers.sent.filter((s) => is5xxNot503(s.status)).length,
    errors_5xx_not_503: [...new Set(writers.sent.flatMap((s) => (s.error && s.status !== 0 ? [s.error] : [])))].slice(0, 5),
    // No answer at all (connection reset, or none within the client's 60 s): when, and why.
    no_answer: writers.sent
      .filter((s) => s.status === 0)
      .slice(0, 5)
      .map((s) => ({ sent_after_stop_ms: s.sentAt - t.stop, waited_ms: s.at - s.sentAt, error: s.error })),
    errors_during_outage: histogram(during.filter((s) => s.status !== 200 && s.status !== 201).map((s) => s.status)),
    acknowledged_during_outage: during.filter((s) => s.status === 200 || s.status === 201).length,
    // Sent during the outage and answered before the store was started again: how fast callers heard.
    writes_during_outage: duringOutage(writers.sent, t),
    reads_during_outage: { ...duringOutage(readers.sent, t), status_5xx_not_503: readers.sent.filter((s) => is5xxNot503(s.status)).length },
    time_to_recover_ms: recovered ? recovered.at - t.started : null,
    readyz: {
      samples_during_outage: down.length,
      truthful_during_outage: down.filter(truthDown).length,
      samples_after_recovery: after.length,
      truthful_after_recovery: after.filter(truthUp).length,
      told_the_truth: down.every(truthDown) && after.every(truthUp),
    },
    ledger: await checkLedger(svc.m, svc.tenantId, writers.ledger),
  };
}

/** Everything one user has in any store, as one number. */
async function records(m: Mnemograph, internalUserId: string): Promise<number> {
  const s = await m.users.stats(internalUserId);
  return Object.values(s.nodes).reduce((a, b) => a + b, 0) + Object.values(s.rows).reduce((a, b) => a + b, 0) + s.workingKeys;
}

/**
 * Forget-user racing `writers` writers (turns, facts, working memory), `rounds` times.
 * Records left: what the user still has after the erasure answered, when no write was
 * acknowledged after it (goal 0). Stranded: records left while the tenant cannot reach the
 * user (every route 404; goal 0).
 */
export async function forgetRace(svc: Service, opts: { rounds: number; writers: number; leadMs: number }) {
  const ns = new TenantNamespace(svc.tenantId);
  const rounds = [];
  for (let round = 0; round < opts.rounds; round++) {
    const userId = `forget-${randomUUID().slice(0, 8)}`;
    await svc.call('POST', '/v1/turns', { userId, conversationId: `${userId}-c`, role: 'user', content: 'first' });
    let erasedAt = Infinity;
    let ackedAfter = 0;
    let stop = false;
    const statuses: number[] = [];
    const loops = Array.from({ length: opts.writers }, async (_, w) => {
      const conversationId = `${userId}-w${w}`;
      for (let i = 0; !stop; i++) {
        const kind = i % 3;
        const r =
          kind === 0
            ? await svc.call('POST', '/v1/turns', { userId, conversationId, role: 'user', content: `writer ${w} turn ${i}` })
            : kind === 1
              ? await svc.call('POST', '/v1/facts', { userId, claim: `The user said thing ${w}-${i}` })
              : await svc.call('PUT', `/v1/users/${userId}/sessions/${conversationId}/context/k${i}`, { value: i });
        statuses.push(r.status);
        if (r.status < 300 && Date.now() > erasedAt) ackedAfter++;
      }
    });
    await sleep(opts.leadMs);
    const erased = await svc.call('DELETE', `/v1/users/${userId}`);
    erasedAt = Date.now();
    stop = true;
    await Promise.all(loops);
    const left = await records(svc.m, ns.toInternal(userId, 'userId'));
    const reachable = (await svc.call('GET', `/v1/users/${userId}/stats`)).status === 200;
    rounds.push({
      erasure_status: erased.status,
      writes_sent: statuses.length,
      statuses: histogram(statuses),
      acknowledged_after_erasure: ackedAfter,
      records_left: ackedAfter === 0 ? left : 0,
      records_of_later_writes: ackedAfter === 0 ? 0 : left,
      stranded: left > 0 && !reachable ? left : 0,
    });
    if (left > 0 && reachable) await svc.call('DELETE', `/v1/users/${userId}`);
  }
  return {
    rounds: rounds.length,
    writers: opts.writers,
    records_left_after_erasure: rounds.map((r) => r.records_left),
    stranded_users: rounds.filter((r) => r.stranded > 0).length,
    status_5xx: rounds.reduce((a, r) => a + Object.entries(r.statuses).reduce((b, [s, n]) => b + (Number(s) >= 500 ? n : 0), 0), 0),
    per_round: rounds,
  };
}

/** `clients` concurrent HTTP clients for `seconds`: `recallShare` recall, the rest storeTurn. */
export async function mixedLoad(svc: Service, opts: { clients: number; seconds: number; recallShare: number; seedTurns: number }) {
  const userId = `load-${randomUUID().slice(0, 8)}`;
  const facts = ['I moved to Lisbon last spring.', 'My sister Ana is a nurse in Porto.', 'I play the cello on weekends.', 'We adopted a cat named Miso.', 'I work as a data engineer.'];
  const seed = Array.from({ length: opts.seedTurns }, (_, i) => ({ userId, conversationId: `${userId}-seed-${Math.floor(i / 50)}`, role: 'user', content: `${facts[i % facts.length]} (note ${i})` }));
  for (let i = 0; i < seed.length; i += 200) {
    const r = await svc.call('POST', '/v1/turns/batch', { turns: seed.slice(i, i + 200) });
    if (r.status !== 201) throw new Error(`seeding: ${r.status} ${JSON.stringify(r.body)}`);
  }
  const questions = ['where does the user live?', 'what does Ana do?', 'which instrument does the user play?', 'what is the cat called?', 'what is the job of the user?'];
  const lat: { recall: number[]; store: number[] } = { recall: [], store: [] };
  const statuses: number[] = [];
  const end = Date.now() + opts.seconds * 1000;
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: opts.clients }, async (_, c) => {
      const conversationId = `${userId}-live-${c}`;
      for (let i = 0; Date.now() < end; i++) {
        const recall = (i * 7 + c) % 100 < opts.recallShare * 100;
        const s = performance.now();
        const r = recall
          ? await svc.call('POST', '/v1/recall', { userId, query: questions[(i + c) % questions.length], topK: 10 })
          : await svc.call('POST', '/v1/turns', { userId, conversationId, role: 'user', content: `client ${c} says ${facts[i % facts.length]}` });
        (recall ? lat.recall : lat.store).push(performance.now() - s);
        statuses.push(r.status);
      }
    }),
  );
  const seconds = (Date.now() - t0) / 1000;
  return {
    clients: opts.clients,
    seconds: Math.round(seconds),
    requests_sent: statuses.length,
    requests_per_second: Math.round((statuses.length / seconds) * 10) / 10,
    statuses: histogram(statuses),
    status_5xx: statuses.filter((s) => s >= 500).length,
    recall_ms: pct(lat.recall),
    store_turn_ms: pct(lat.store),
  };
}

function pct(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => (s.length ? Math.round(s[Math.min(s.length - 1, Math.floor(p * s.length))]! * 10) / 10 : null);
  return { n: s.length, p50: at(0.5), p95: at(0.95), max: s.length ? Math.round(s[s.length - 1]!) : null };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
