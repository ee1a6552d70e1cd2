import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Mnemograph } from '../src/container';
import { percentiles } from './recall-metrics';
import { ApiClient, probeQuery, probeUser, SURFACES, type Seen, type Surface } from './lifetime-probe';

/**
 * The deletion pass: deletes a deterministic sample of a user set's turns, conversations and
 * facts through the public HTTP API, then asks about every deleted item and a sample of
 * survivors on every surface (lifetime-probe.ts) and counts leaks and wrong removals, as
 * lifetime.ts's header defines them.
 */

export interface DeletionPlan {
  turns: number;
  conversations: number;
  facts: number;
  survivors: number;
  topK: number;
}

interface TurnRow {
  id: string;
  userId: string;
  conversationId: string;
  index: number;
  content: string;
}
interface FactRow {
  id: string;
  userId: string;
  claim: string;
  sources: string[];
}

/** One thing the pass asks about: who owns it, what it is, the query that should find it. */
interface Item {
  /** `learned_fact`: a fact learned only from deleted turns (deleted with them, if deletes cascade). */
  kind: 'turn' | 'conversation' | 'fact' | 'learned_fact';
  id: string;
  userId: string;
  query: string;
  /** Text that identifies it in a prose answer (recall/context); null when not unique or too short. */
  marker: string | null;
  /** A conversation's own turns (a deleted conversation leaks through any of them). */
  turnIds?: string[];
}

// $userIds -> {id, userId, conversationId, index, content}: the users' turns (internal ids)
const TURNS = `MATCH (t:Turn) WHERE t.user_id IN $userIds RETURN t.id AS id, t.user_id AS userId, t.conversation_id AS conversationId, t.index AS index, t.content AS content`;
// $userIds -> {id, userId, claim, sources}: active facts with the turns they were learned from
const FACTS = `MATCH (f:Fact) WHERE f.user_id IN $userIds AND f.status = 'active'
OPTIONAL MATCH (f)-[:DERIVED_FROM]->(t:Turn)
WITH f, [x IN collect(t.id) + [f.source_turn_id] WHERE x IS NOT NULL] AS sources
RETURN f.id AS id, f.user_id AS userId, f.claim AS claim, sources`;

/** Every n-th element, n chosen so that `count` are taken evenly from the whole list (sorted first: deterministic). */
export function spread<T>(items: T[], count: number, offset = 0): T[] {
  if (count <= 0 || items.length === 0) return [];
  const step = items.length / Math.min(count, items.length);
  return Array.from({ length: Math.min(count, items.length) }, (_, i) => items[Math.floor(i * step + offset * step) % items.length]!);
}

const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A marker is the text itself when it is long enough and no other item of the user says the same. */
function markers(rows: Array<{ id: string; userId: string; text: string }>): Map<string, string | null> {
  const seen = new Map<string, number>();
  for (const r of rows) seen.set(`${r.userId}\u0000${r.text}`, (seen.get(`${r.userId}\u0000${r.text}`) ?? 0) + 1);
  return new Map(rows.map((r) => [r.id, r.text.length >= 30 && seen.get(`${r.userId}\u0000${r.text}`) === 1 ? r.text : null]));
}

/** What is deleted and which survivors are watched, chosen from the users' data in id order. */
export function choose(turns: TurnRow[], facts: FactRow[], plan: DeletionPlan, external: (id: string) => string) {
  const turnMarker = markers(turns.map((t) => ({ id: t.id, userId: t.userId, text: t.content })));
  const factMarker = markers(facts.map((f) => ({ id: f.id, userId: f.userId, text: f.claim })));
  const turnItem = (t: TurnRow): Item => ({ kind: 'turn', id: external(t.id), userId: external(t.userId), query: t.content.slice(0, 2_000), marker: turnMarker.get(t.id) ?? null });
  const factItem = (f: FactRow): Item => ({ kind: 'fact', id: external(f.id), userId: external(f.userId), query: f.claim, marker: factMarker.get(f.id) ?? null });
  const bySession = new Map<string, TurnRow[]>();
  for (const t of [...turns].sort((a, b) => a.index - b.index)) bySession.set(t.conversationId, [...(bySession.get(t.conversationId) ?? []), t]);
  const conversationItem = (id: string): Item => {
    const own = bySession.get(id)!;
    const longest = own.reduce((a, b) => (b.content.length > a.content.length ? b : a));
    return { kind: 'conversation', id: external(id), userId: external(own[0]!.userId), query: longest.content.slice(0, 2_000), marker: null, turnIds: own.map((t) => external(t.id)) };
  };
  const sessions = [...bySession.keys()].sort();
  const goneSessions = new Set(spread(sessions, plan.conversations));
  const candidates = turns.filter((t) => !goneSessions.has(t.conversationId) && t.content.length >= 20).sort(byId);
  const goneTurns = spread(candidates, plan.turns);
  const goneTurnIds = new Set([...goneTurns.map((t) => t.id), ...turns.filter((t) => goneSessions.has(t.conversationId)).map((t) => t.id)]);
  const sortedFacts = [...facts].sort(byId);
  const retracted = spread(sortedFacts, plan.facts);
  const retractedIds = new Set(retracted.map((f) => f.id));
  // Learned only from deleted content: every turn it was learned from is deleted.
  const orphaned = sortedFacts.filter((f) => !retractedIds.has(f.id) && f.sources.length > 0 && f.sources.every((s) => goneTurnIds.has(s)));
  const survivingTurns = candidates.filter((t) => !goneTurnIds.has(t.id));
  const survivingFacts = sortedFacts.filter((f) => !retractedIds.has(f.id) && f.sources.some((s) => !goneTurnIds.has(s)));
  return {
    deleted: {
      turns: goneTurns.map(turnItem),
      conversations: [...goneSessions].map(conversationItem),
      facts: retracted.map(factItem),
    },
    orphanedFacts: orphaned.map((f) => ({ ...factItem(f), kind: 'learned_fact' as const })),
    survivors: {
      turns: spread(survivingTurns, plan.survivors, 0.5).map(turnItem),
      conversations: spread(
        sessions.filter((s) => !goneSessions.has(s)),
        Math.max(1, Math.round(plan.conversations / 2)),
        0.5,
      ).map(conversationItem),
      facts: spread(survivingFacts, Math.round(plan.survivors / 2), 0.5).map(factItem),
    },
  };
}

/** What every surface returned, per user (whole-user surfaces) and per probe (query surfaces). */
interface Observation {
  byUser: Map<string, Partial<Record<Surface, Seen>>>;
  byProbe: Map<Item, Partial<Record<Surface, Seen>>>;
}

async function observe(api: ApiClient, mcps: Map<string, Client>, probes: Item[], conversationsOf: Map<string, string[]>, topK: number): Promise<Observation> {
  const byUser = new Map<string, Partial<Record<Surface, Seen>>>();
  for (const [userId, conversations] of conversationsOf) byUser.set(userId, await probeUser(api, userId, conversations));
  const byProbe = new Map<Item, Partial<Record<Surface, Seen>>>();
  for (const p of probes) byProbe.set(p, await probeQuery(api, mcps.get(p.userId)!, p.userId, p.query, topK));
  return { byUser, byProbe };
}

/** Whether `item` is in what a surface returned: by id (a conversation also by any of its turns), or its marker in prose. */
function returns(seen: Seen | undefined, item: Item): boolean {
  if (!seen) return false;
  if (seen.ids.has(item.id) || item.turnIds?.some((t) => seen.ids.has(t))) return true;
  return item.marker !== null && seen.text.includes(item.marker);
}

/** Leaks: (deleted item, surface) pairs where the surface still returns it, to any probe or in any listing of its user. */
function countLeaks(items: Item[], obs: Observation) {
  const perSurface = Object.fromEntries(SURFACES.map((s) => [s, 0])) as Record<Surface, number>;
  const byKind: Record<string, { items: number; leaked: number; per_surface: Partial<Record<Surface, number>> }> = {};
  const examples: Array<{ kind: string; id: string; surface: Surface }> = [];
  let items_leaked = 0;
  for (const item of items) {
    const answers = [obs.byUser.get(item.userId) ?? {}, ...[...obs.byProbe].filter(([p]) => p.userId === item.userId).map(([, a]) => a)];
    const leakedOn = SURFACES.filter((s) => answers.some((a) => returns(a[s], item)));
    const k = (byKind[item.kind] ??= { items: 0, leaked: 0, per_surface: {} });
    k.items++;
    for (const s of leakedOn) {
      perSurface[s]++;
      k.per_surface[s] = (k.per_surface[s] ?? 0) + 1;
    }
    if (leakedOn.length > 0) {
      items_leaked++;
      k.leaked++;
    }
    if (leakedOn.length > 0 && examples.length < 10) examples.push({ kind: item.kind, id: item.id, surface: leakedOn[0]! });
  }
  return { total: Object.values(perSurface).reduce((a, b) => a + b, 0), items_leaked, items: items.length, per_surface: perSurface, by_kind: byKind, examples };
}

/** Wrong removals: (survivor, surface) pairs where its own probe (or its user's listing) returned it before the deletions and not after. */
function countWrongRemovals(items: Item[], before: Observation, after: Observation) {
  const perSurface = Object.fromEntries(SURFACES.map((s) => [s, 0])) as Record<Surface, number>;
  const foundBefore = Object.fromEntries(SURFACES.map((s) => [s, 0])) as Record<Surface, number>;
  const examples: Array<{ kind: string; id: string; surface: Surface }> = [];
  for (const item of items) {
    const was = { ...before.byUser.get(item.userId), ...before.byProbe.get(item) };
    const now = { ...after.byUser.get(item.userId), ...after.byProbe.get(item) };
    for (const s of SURFACES) {
      if (!returns(was[s], item)) continue;
      foundBefore[s]++;
      if (returns(now[s], item)) continue;
      perSurface[s]++;
      if (examples.length < 10) examples.push({ kind: item.kind, id: item.id, surface: s });
    }
  }
  return { total: Object.values(perSurface).reduce((a, b) => a + b, 0), items: items.length, found_before: foundBefore, per_surface: perSurface, examples };
}

/** Deletes the chosen items through the API; the time of each call. */
async function deleteAll(api: ApiClient, deleted: ReturnType<typeof choose>['deleted']): Promise<Record<string, { p50: number; p95: number; n: number }>> {
  const ms = { turn: [] as number[], conversation: [] as number[], fact: [] as number[] };
  const must = async (kind: keyof typeof ms, method: string, path: string, body?: unknown) => {
    const r = await api.call(method, path, body);
    if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 300)}`);
    ms[kind].push(r.ms);
  };
  // Facts first: a delete of the turns a fact came from takes the fact with it, and a retraction would then find nothing.
  for (const f of deleted.facts) await must('fact', 'POST', `/v1/users/${f.userId}/facts/${f.id}/retract`, { reason: 'bench:lifetime deletion pass' });
  for (const t of deleted.turns) {
    const [conversationId, index] = [t.id.slice(0, t.id.lastIndexOf(':')), t.id.slice(t.id.lastIndexOf(':') + 1)];
    await must('turn', 'DELETE', `/v1/users/${t.userId}/conversations/${conversationId}/turns/${index}`);
  }
  for (const c of deleted.conversations) await must('conversation', 'DELETE', `/v1/users/${c.userId}/conversations/${c.id}`);
  return Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, { ...percentiles(v), n: v.length }]));
}

/**
 * Runs the pass over `userIds` (internal ids of the tenant behind `api`): chooses, observes
 * every surface, deletes, observes again, counts. MCP clients are opened per user.
 */
export async function runDeletionPass(m: Mnemograph, api: ApiClient, userIds: string[], plan: DeletionPlan): Promise<Record<string, unknown>> {
  const tag = { subsystem: 'bench', op: 'lifetimeDeletion' };
  const turns = await m.neo4j.read<TurnRow>(TURNS, { userIds }, tag);
  const facts = await m.neo4j.read<FactRow>(FACTS, { userIds }, tag);
  const chosen = choose(turns, facts, plan, (id) => api.external(id));
  const deletedItems = [
    ...chosen.deleted.turns,
    ...chosen.deleted.conversations.flatMap((c) => [c, ...c.turnIds!.map((id) => ({ ...c, kind: 'turn' as const, id, turnIds: undefined, marker: null }))]),
    ...chosen.deleted.facts,
    ...chosen.orphanedFacts,
  ];
  const survivors = [...chosen.survivors.turns, ...chosen.survivors.conversations, ...chosen.survivors.facts];
  const probes = [...chosen.deleted.turns, ...chosen.deleted.conversations, ...chosen.deleted.facts, ...chosen.orphanedFacts, ...survivors];
  // The studio lists the turns of every conversation the pass touches or watches.
  const conversationsOf = new Map<string, string[]>();
  for (const i of [...probes, ...deletedItems]) {
    const conv = i.kind === 'conversation' ? i.id : i.kind === 'turn' ? i.id.slice(0, i.id.lastIndexOf(':')) : null;
    const list = conversationsOf.get(i.userId) ?? [];
    if (conv && !list.includes(conv)) list.push(conv);
    conversationsOf.set(i.userId, list);
  }
  const mcps = new Map<string, Client>();
  for (const u of conversationsOf.keys()) mcps.set(u, await api.mcp(u));
  try {
    const t0 = performance.now();
    const before = await observe(api, mcps, probes, conversationsOf, plan.topK);
    const deleteMs = await deleteAll(api, chosen.deleted);
    const after = await observe(api, mcps, probes, conversationsOf, plan.topK);
    const leaksBefore = countLeaks(deletedItems, before);
    return {
      deleted: {
        turns: chosen.deleted.turns.length,
        conversations: chosen.deleted.conversations.length,
        conversation_turns: deletedItems.length - chosen.deleted.turns.length - chosen.deleted.conversations.length - chosen.deleted.facts.length - chosen.orphanedFacts.length,
        facts_retracted: chosen.deleted.facts.length,
        facts_learned_only_from_deleted: chosen.orphanedFacts.length,
      },
      survivors: { turns: chosen.survivors.turns.length, conversations: chosen.survivors.conversations.length, facts: chosen.survivors.facts.length },
      probes: probes.length,
      found_before_deletion: { items: leaksBefore.items_leaked, of: leaksBefore.items, per_surface: leaksBefore.per_surface },
      leaks: countLeaks(deletedItems, after),
      wrong_removals: countWrongRemovals(survivors, before, after),
      delete_ms: deleteMs,
      seconds: Math.round((performance.now() - t0) / 100) / 10,
    };
  } finally {
    for (const c of mcps.values()) await c.close();
  }
}
