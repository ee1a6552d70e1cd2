/**
 * LoCoMo through the worker's write path, shared by bench:consolidation and bench:observations:
 * every session stored as a conversation of its sample's user (`storeTurns`, each turn's
 * speaker in its metadata, seconds apart from the session's date), then the `consolidate`
 * job run until no conversation is left, as the scheduled job does; for bench:observations,
 * what was learned read back with its source turns as LoCoMo dia ids.
 */
import type { Mnemograph } from '../src/container';
import type { Worker } from '../src/worker';
import type { LearnedFact } from './observation-score';
import type { BenchConversation, BenchDataset } from './recall-datasets';

/** Who speaks as the user: speaker A only (as bench:recall stores LoCoMo), or both speakers. */
export type SpeakerRoles = 'a-user' | 'both-user';

/** Stores every session of `conv`; returns the number of turns stored. */
export async function storeLocomoConversation(m: Mnemograph, conv: BenchConversation, userId: string, conversationId: (sessionKey: string) => string, roles: SpeakerRoles = 'a-user'): Promise<number> {
  let turns = 0;
  for (const s of conv.sessions) {
    if (s.turns.length === 0) continue;
    const base = Date.parse(s.date);
    await m.memory.storeTurns(
      s.turns.map((t, i) => ({
        userId,
        conversationId: conversationId(s.key),
        index: i,
        role: roles === 'both-user' ? 'user' : t.role,
        content: t.content,
        timestamp: new Date(base + i * 1000).toISOString(),
        metadata: { speaker: t.speaker },
      })),
    );
    turns += s.turns.length;
  }
  return turns;
}

/** Runs `consolidate` for `userIds` until a run finds nothing left; returns how many runs it took. */
export async function consolidateUntilDone(worker: Worker, userIds: string[]): Promise<number> {
  let runs = 0;
  for (;;) {
    const r = await worker.runJob('consolidate', { userIds });
    runs++;
    if (r.status !== 'succeeded') throw new Error(`consolidate failed: ${r.error ?? r.status}`);
    if ((r.stats.conversations ?? 0) === 0) return runs;
  }
}

/** Stores and consolidates every conversation, reads back what was learned, erases the users (`run` prefixes their ids). */
export async function learnFromLocomo(m: Mnemograph, ds: BenchDataset, roles: SpeakerRoles, keep: boolean): Promise<{ run: string; facts: LearnedFact[]; turns: number; seconds: number }> {
  const run = `ob${Date.now().toString(36)}`;
  const userOf = (conv: string) => `${run}-${conv}`;
  const users = ds.conversations.map((c) => userOf(c.key));
  try {
    let turns = 0;
    for (const conv of ds.conversations) turns += await storeLocomoConversation(m, conv, userOf(conv.key), (session) => `${run}-${session}`, roles);
    const worker = m.createWorker({ workerId: `bench-observations-${run}` });
    const t0 = performance.now();
    try {
      await consolidateUntilDone(worker, users);
    } finally {
      await worker.stop();
    }
    const seconds = +((performance.now() - t0) / 1000).toFixed(1);
    const facts: LearnedFact[] = [];
    for (const conv of ds.conversations) facts.push(...(await readFacts(m, userOf(conv.key), conv.key)));
    return { run, facts, turns, seconds };
  } finally {
    if (!keep) for (const u of users) await m.users.erase(u);
  }
}

/** "ob…-conv-26-s3:4" (a stored turn id: session conversation, 0-based index) -> "D3:5". */
export function diaIdOf(turnId: string): string | undefined {
  const m = /-s(\d+):(\d+)$/.exec(turnId);
  return m ? `D${m[1]}:${Number(m[2]) + 1}` : undefined;
}

const FACT_LIMIT = 1000;

/** The user's facts (findFacts, inactive too), with every DERIVED_FROM turn and ABOUT entity name from the export. */
async function readFacts(m: Mnemograph, userId: string, conversation: string): Promise<LearnedFact[]> {
  const facts = await m.memory.semantic.findFacts({ userId, channels: ['_global'], includeInactive: true, limit: FACT_LIMIT });
  if (facts.length === FACT_LIMIT) throw new Error(`${userId} has ${FACT_LIMIT} facts or more; raise FACT_LIMIT so none is left out`);
  const ids = new Map<string, string>();
  const names = new Map<string, string>();
  const derived = new Map<string, string[]>();
  for await (const line of m.users.export(userId)) {
    if (line.kind === 'node') {
      ids.set(line.ref, String(line.props.id));
      if (line.labels.includes('Entity')) names.set(String(line.props.id), String(line.props.name));
    } else if (line.kind === 'rel' && line.type === 'DERIVED_FROM' && typeof line.start === 'string' && typeof line.end === 'string') {
      const fact = ids.get(line.start);
      const turn = ids.get(line.end);
      if (fact && turn) derived.set(fact, [...(derived.get(fact) ?? []), turn]);
    }
  }
  return facts.map((f) => {
    const turns = [f.sourceTurnId, ...(derived.get(f.id) ?? [])].filter((t): t is string => t !== null);
    const p = f.properties;
    return {
      conversation,
      id: f.id,
      subject: typeof p.subject === 'string' ? p.subject : 'user',
      predicate: f.predicate ?? 'fact',
      ...(typeof p.object === 'string' ? { object: p.object } : {}),
      claim: f.claim,
      polarity: p.polarity === 'negative' ? 'negative' : 'positive',
      temporal: f.temporal,
      status: f.status,
      sources: [...new Set(turns.map(diaIdOf).filter((d): d is string => d !== undefined))],
      about: f.aboutEntityIds.map((e) => names.get(e) ?? e),
    };
  });
}
