import type { AuditLogger } from '../audit';
import type { Embedder } from '../embedding';
import type { EpisodicStore, TurnFilters, TurnWindow } from '../episodic/contract';
import { userScope, type AccessScope } from '../access';
import { errorMessage, StoreUnavailableError } from '../errors';
import { windowStart } from '../schemas';
import type { Logger } from '../infra/logger';
import type {
  MemoryBundle,
  ParsedRecallQuery,
  ProfileSource,
  RecallEngine,
  RecalledItem,
  RecalledTurn,
  RecallItem,
  RecallItemKind,
  RecallSettings,
  RecallSource,
  Reinforcer,
  Signals,
  SourceWeights,
  TextGenerator,
} from './contract';
import { changeTurns, liftChangeTurns, preferCurrent, questionTense, TEMPORAL_BOOST, type Tense } from './currency';
import { recencyScore, round } from './fusion';
import { TURN_GENERATORS } from './generators';
import { keywords, statementForm, withoutWords } from './query-text';
import type { Reranker } from './rerank';
import { llmTimeHint, mayNameTime, parseTimeHint, type TimeHint } from './self-query';
import { SpeakerMemo } from './speaker-memo';
import { TURN_STAGES } from './stages';
import { generate, rankTurns, type CandidateGenerator, type TurnRecall, type TurnStage } from './turn-pipeline';

export interface RecallEngineDeps {
  episodic: Pick<EpisodicStore, 'fulltextSearch' | 'similarTurns' | 'getTurnsByIds' | 'speakers'>;
  embedder: Embedder;
  settings: RecallSettings;
  audit: AuditLogger;
  log: Logger;
  sources?: RecallSource[];
  /** Which kinds a user has at all; sources of absent kinds are skipped. */
  presence?: { kinds(scope: AccessScope): Promise<Set<RecallItemKind>> };
  profile?: ProfileSource;
  reinforcer?: Reinforcer;
  /** Enables the LLM techniques (query expansion, HyDE); without it they use the offline path. */
  generator?: TextGenerator;
  /** Reorders the fused top turns when the rerank technique is on. */
  reranker?: Reranker;
  /** The turn candidate generators (default TURN_GENERATORS). */
  generators?: readonly CandidateGenerator[];
  /** The turn ranking stages (default TURN_STAGES). */
  stages?: readonly TurnStage[];
}

const DAY_MS = 86_400_000;
const SOURCE_WEIGHT: Record<RecallItemKind, keyof SourceWeights> = { fact: 'facts', entity: 'entities', strategy: 'procedural', goal: 'procedural', pool: 'facts' };
const INCLUDE: Record<RecallItemKind, keyof ParsedRecallQuery> = { fact: 'includeFacts', entity: 'includeEntities', strategy: 'includeStrategies', goal: 'includeGoals', pool: 'includePools' };

/**
 * Hybrid recall: the turn pipeline (candidate generators, fusion, stages, hydration,
 * rerank; see turn-pipeline.ts) and the pluggable sources for facts, entities, strategies and
 * goals, all in parallel, each one Neo4j round trip where possible; a failing signal or
 * source is recorded in `degraded` and the rest still answer.
 */
export class HybridRecallEngine implements RecallEngine {
  private readonly speakers: SpeakerMemo;
  private readonly generators: readonly CandidateGenerator[];
  private readonly stages: readonly TurnStage[];

  constructor(private readonly d: RecallEngineDeps) {
    this.generators = d.generators ?? TURN_GENERATORS;
    this.stages = d.stages ?? TURN_STAGES;
    this.speakers = new SpeakerMemo((scope) => d.episodic.speakers(scope), {
      onRefreshError: (err) => d.log.warn({ subsystem: 'retrieval', err: errorMessage(err) }, 'speaker names not refreshed; the known ones stay'),
    });
  }

  async recall(q: ParsedRecallQuery, scope: AccessScope = userScope(q.userId, { channels: q.channels })): Promise<MemoryBundle> {
    const bundle = await this.answer(q, scope);
    this.afterRecall(q, bundle);
    return bundle;
  }

  /** The recall without its audit row and reinforcement (warm-up's rehearsal, AgentMemory.rehearseRecall). */
  rehearse(q: ParsedRecallQuery, scope: AccessScope): Promise<MemoryBundle> {
    return this.answer(q, scope);
  }

  async rehearseReinforcement(userId: string, bundle: MemoryBundle): Promise<void> {
    await this.d.reinforcer?.rehearse?.(userId, recalledItems(bundle));
  }

  private async answer(q: ParsedRecallQuery, scope: AccessScope): Promise<MemoryBundle> {
    const t0 = performance.now();
    const s = this.d.settings;
    const tech = { ...s.techniques, ...stripUndefined(q.techniques ?? {}) };
    const channels = [...scope.channels];
    const asOf = q.asOf ? new Date(q.asOf) : new Date();
    const degraded: string[] = [];
    const timings: Record<string, number> = {};
    // Neo4j away: nothing can be recalled, and an empty 200 would tell the caller the user has no
    // memories. Noted here, thrown once every signal has settled (503 with Retry-After at the API).
    let outage: StoreUnavailableError | undefined;
    const timed = async <T>(name: string, work: () => Promise<T>, fallback: T): Promise<T> => {
      const start = performance.now();
      try {
        return await work();
      } catch (err) {
        if (err instanceof StoreUnavailableError && err.details.store === 'neo4j') outage ??= err;
        degraded.push(`${name}: ${errorMessage(err)}`);
        this.d.log.warn({ subsystem: 'retrieval', signal: name, err: errorMessage(err) }, 'recall signal failed; answering without it');
        return fallback;
      } finally {
        timings[name] = round(performance.now() - start);
      }
    };

    // Time: hard limits from the window and filters; a self-query hint filters or boosts.
    let since = q.timeWindowHours !== undefined ? windowStart(q.timeWindowHours, asOf.getTime()) : undefined;
    let until: string | undefined;
    let time: MemoryBundle['time'];
    if (since) time = { since, from: 'window', mode: 'filter' };
    if (q.filters?.since) since = laterOf(since, q.filters.since);
    if (q.filters?.until) until = q.filters.until;
    if (q.filters?.since || q.filters?.until) time = { since, until, from: 'filters', mode: 'filter' };
    const rulesHint = tech.selfQuery !== 'off' ? parseTimeHint(q.query, asOf) : undefined;
    let llmHint: Promise<TimeHint | undefined> | undefined;
    if (!rulesHint && tech.selfQuery !== 'off' && tech.selfQueryLlm && mayNameTime(q.query)) {
      const generator = this.d.generator;
      if (!generator) degraded.push('selfQueryLlm: no LLM configured; time expressions by rules only');
      else llmHint = timed('selfQuery', () => llmTimeHint(generator, q.query, asOf, q.userId), undefined);
    }
    const from = rulesHint ? 'self-query' : 'self-query (llm)';
    // A filter narrows every search, so the LLM's period is needed before them; a boost only
    // at fusion, so then the LLM answers while Neo4j searches.
    let hint = rulesHint ?? (tech.selfQuery === 'filter' ? await llmHint : undefined);
    if (hint && tech.selfQuery === 'filter') {
      since = laterOf(since, hint.since);
      until = until === undefined || hint.until < until ? hint.until : until;
      time = { since, until, from, mode: 'filter' };
    } else if (hint) time = { since: hint.since, until: hint.until, from, mode: 'boost' };

    const filters: TurnFilters = { source: q.filters?.source, sessionId: q.filters?.sessionId, connectionId: q.filters?.connectionId, contextType: q.filters?.contextType };
    const window: TurnWindow = { since, until, filters };
    const queryText = rulesHint ? q.query.replace(rulesHint.text, ' ') : q.query;
    const sources = (this.d.sources ?? []).filter((src) => q[INCLUDE[src.kind]] === true);
    const turns: TurnRecall = {
      q,
      scope,
      window,
      tech,
      settings: s,
      asOf,
      terms: keywords(queryText),
      candidates: Math.max(s.candidates, q.topK * 3),
      deps: { episodic: this.d.episodic, speakers: this.speakers, generator: this.d.generator },
      degraded,
      timed,
    };

    // Turns are embedded as "speaker: content", so a name in the query pulls every turn of
    // that speaker and every turn that greets them; as in full-text, the turn search leaves
    // the names of the user's speakers out (the speaker boost uses them). The sources get the
    // query as asked for their full-text searches.
    const turnVector = q.includeEpisodic && this.generators.some((g) => g.usesEmbedding && g.enabled(turns));
    // Read from the user's conversations on their first recall here, then refreshed in the background.
    const speakerNames = tech.speakerBoost ? await this.speakers.get(scope, (read) => timed('speakers', read, [] as string[])) : undefined;
    const embedOne = async (text: string) => (await this.d.embedder.embed([text], { priority: 'interactive', input: 'query' }))[0];
    // The text embedded (HyDE may ask an LLM for it, so it is worked out once).
    const asked = turnVector || sources.length > 0 ? this.embeddingText(q.query, q.userId, tech, degraded) : Promise.resolve(q.query);
    const turnText = asked.then((a) => (speakerNames ? withoutWords(a, speakerNames) : a));
    const turnEmbedding = turnVector ? timed('embed', async () => embedOne(await turnText), undefined) : Promise.resolve(undefined);
    // Asked while the query is embedded; unknown (no presence check, or it failed) = search all.
    const present = sources.length > 0 && this.d.presence ? timed('presence', () => this.d.presence!.kinds(scope), undefined) : Promise.resolve(undefined);
    // The sources search with the turn search's vector (one query embedding per recall; the
    // speakers' names it leaves out still reach facts and entities through their full-text
    // search: docs/recall-tuning.md, session 21). Without a turn vector the query is embedded
    // for them alone, and only when the user holds something they find.
    const embedding =
      sources.length === 0
        ? Promise.resolve(undefined)
        : turnVector
          ? turnEmbedding
          : Promise.all([asked, present]).then(([a, kinds]) => (kinds && !sources.some((src) => kinds.has(src.kind)) ? undefined : timed('embedItems', () => embedOne(a), undefined)));

    // LLM techniques without an LLM fall back to their offline path, and say so.
    if (tech.rerank && !this.d.reranker) degraded.push('rerank: no reranker configured; fused order kept');
    if (tech.queryExpansion === 'llm' && !this.d.generator) {
      degraded.push('queryExpansion: no LLM configured; using offline feedback expansion');
      tech.queryExpansion = 'feedback';
    }
    const lists = generate(turns, this.generators, () => turnEmbedding);
    const items = sources.map((src) =>
      Promise.all([embedding, present]).then(([e, kinds]) =>
        kinds && !kinds.has(src.kind)
          ? ([] as RecallItem[])
          : timed(src.kind, () => src.search({ scope, query: q.query, embedding: e, limit: q.topK, since, until, filters, asOf: asOf.toISOString() }), [] as RecallItem[]),
      ),
    );
    const profile = q.includeProfile && this.d.profile ? timed('profile', () => this.d.profile!.getProfile(q.userId), null) : Promise.resolve(null);

    const [turnLists, itemLists, userProfile] = await Promise.all([lists, Promise.all(items), profile]);
    if (!hint && llmHint) {
      hint = await llmHint;
      if (hint) time = { since: hint.since, until: hint.until, from, mode: 'boost' };
    }
    const tFuse = performance.now();
    const recalled = q.includeEpisodic ? await rankTurns(turns, this.generators, turnLists, this.stages, { hint, reranker: this.d.reranker }) : [];
    timings.fuse = round(performance.now() - tFuse);

    // Facts: their temporal tag weighs by the question's tense, and a past value never ranks
    // above the current value of the same predicate unless the question is about the past.
    const tense = questionTense(q.query);
    const byKind: Record<RecallItemKind, RecalledItem[]> = { fact: [], entity: [], strategy: [], goal: [], pool: [] };
    sources.forEach((src, i) => byKind[src.kind].push(...this.rankItems(itemLists[i]!, s.weights, tech.recency, asOf, tense)));
    for (const kind of Object.keys(byKind) as RecallItemKind[]) {
      const ranked = sortByRelevance(dedupe(byKind[kind]));
      byKind[kind] = (kind === 'fact' ? preferCurrent(ranked, tense) : ranked).slice(0, q.topK);
    }
    // The turn that changed a recalled fact ranks above the turns that said the old value (a
    // question about the past keeps the turn order: the old value may be its answer).
    const turnsOut = tense === 'past' || recalled.length === 0 ? recalled : await this.withChangeTurns(recalled, byKind.fact, q, scope, window, timed);
    if (outage) throw outage;

    const bundle: MemoryBundle = {
      query: q.query,
      userId: q.userId,
      channels,
      turns: turnsOut,
      facts: byKind.fact,
      entities: byKind.entity,
      strategies: byKind.strategy,
      goals: byKind.goal,
      pools: byKind.pool,
      profile: userProfile,
      time,
      degraded,
      timings,
    };
    timings.total = round(performance.now() - t0);
    return bundle;
  }

  /**
   * The text the query is embedded from: with HyDE and an LLM, the question and a
   * hypothetical answer; otherwise the question in statement form (or as asked).
   */
  private async embeddingText(query: string, userId: string, tech: RecallSettings['techniques'], degraded: string[]): Promise<string> {
    const offline = tech.statementQuery ? statementForm(query) : query;
    if (!tech.hyde) return offline;
    if (!this.d.generator) {
      degraded.push(`hyde: no LLM configured; embedding the ${tech.statementQuery ? 'question in statement form' : 'question itself'}`);
      return offline;
    }
    try {
      const answer = await this.d.generator.generate(`Write one short sentence that could answer: ${query}`, { maxTokens: 80, userId });
      return `${query}\n${answer}`;
    } catch (err) {
      degraded.push(`hyde: ${errorMessage(err)}; embedding the ${tech.statementQuery ? 'question in statement form' : 'question itself'}`);
      return offline;
    }
  }

  /**
   * `liftChangeTurns` over the ranked turns; a change turn the turn search did not return is
   * read by id (same scope and window). Without a recalled change, no store call.
   */
  private async withChangeTurns(
    recalled: RecalledTurn[],
    facts: RecalledItem[],
    q: ParsedRecallQuery,
    scope: AccessScope,
    window: TurnWindow,
    timed: <T>(name: string, work: () => Promise<T>, fallback: T) => Promise<T>,
  ): Promise<RecalledTurn[]> {
    const { changed } = changeTurns(facts);
    if (changed.size === 0) return recalled;
    const have = new Set(recalled.map((t) => t.turn.id));
    const ids = [...changed].filter((id) => !have.has(id));
    const missing = ids.length > 0 ? await timed('changeTurns', () => this.d.episodic.getTurnsByIds(ids, scope, window), []) : [];
    return liftChangeTurns(recalled, facts, missing, q.topK);
  }

  private rankItems(items: RecallItem[], weights: SourceWeights, recency: boolean, asOf: Date, tense: Tense): RecalledItem[] {
    const max = Math.max(...items.map((i) => i.score), 1e-9);
    return items.map((item, i) => {
      const w = weights[SOURCE_WEIGHT[item.kind]];
      const temporal = item.temporal ? TEMPORAL_BOOST[tense][item.temporal] : 1;
      const r = recency && item.timestamp ? recencyScore(Date.parse(item.timestamp), asOf.getTime(), this.d.settings.recencyHalfLifeDays * DAY_MS) : 0;
      const signals: Signals = { ...item.signals, [item.kind]: { rank: i + 1, score: round(item.score, 4) } };
      if (item.temporal) signals.temporal = { note: item.temporal, score: temporal };
      return { ...item, relevance: round(w * (item.score / max) * temporal + weights.recency * r, 6), signals };
    });
  }

  /** Audit (with cross-channel hits) and reinforcement: queued, never awaited. */
  private afterRecall(q: ParsedRecallQuery, b: MemoryBundle): void {
    const active = q.channels[0]!;
    const all = recalledItems(b);
    const cross: Record<string, number> = {};
    for (const item of all) if (item.channel !== active) cross[item.channel] = (cross[item.channel] ?? 0) + 1;
    this.d.audit.logRead({
      operation: 'remember',
      memoryType: 'system',
      userId: q.userId,
      channel: active,
      query: q.query,
      channelsSearched: b.channels,
      resultCount: all.length,
      affectedIds: [...new Set(all.map((i) => i.id))],
      latencyMs: b.timings.total ?? 0,
      metadata: { crossChannelHits: cross, degraded: b.degraded, timings: b.timings },
    });
    if (all.length > 0) this.d.reinforcer?.record(q.userId, all);
  }
}

/** Everything a recall returned, as reinforcement counts it. */
function recalledItems(b: MemoryBundle): Array<{ kind: 'turn' | RecallItemKind; id: string; channel: string }> {
  return [
    ...b.turns.map((t) => ({ kind: 'turn' as const, id: t.turn.id, channel: t.turn.channel })),
    ...[...b.facts, ...b.entities, ...b.strategies, ...b.goals, ...b.pools].map((i) => ({ kind: i.kind, id: i.id, channel: i.channel })),
  ];
}

function dedupe(items: RecalledItem[]): RecalledItem[] {
  const seen = new Map<string, RecalledItem>();
  for (const item of items) {
    const prev = seen.get(item.id);
    if (!prev || item.relevance > prev.relevance) seen.set(item.id, item);
  }
  return [...seen.values()];
}

function sortByRelevance(items: RecalledItem[]): RecalledItem[] {
  return [...items].sort((a, b) => b.relevance - a.relevance);
}

function laterOf(a: string | undefined, b: string): string {
  return a === undefined || Date.parse(b) > Date.parse(a) ? b : a;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
