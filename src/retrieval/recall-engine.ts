import type { AuditLogger } from '../audit';
import type { Embedder } from '../embedding';
import type { EpisodicStore, Turn, TurnFilters, TurnHit } from '../episodic/contract';
import { parseTurnId, turnId, withGlobal } from '../access';
import { embeddingText } from '../episodic/prepare';
import { errorMessage } from '../errors';
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
import { capPerGroup, recencyScore, smoothNeighbours, sortByScore, weightedRrf, weightedScoreFusion, type Position } from './fusion';
import { asksWhen, buildLuceneQuery, keywords, statementForm, withoutWords, words } from './query-text';
import type { Reranker } from './rerank';
import { llmTimeHint, mayNameTime, parseTimeHint, type TimeHint } from './self-query';
import { SpeakerMemo } from './speaker-memo';

export interface RecallEngineDeps {
  episodic: Pick<EpisodicStore, 'fulltextSearch' | 'similarTurns' | 'getTurnsByIds' | 'speakers'>;
  embedder: Embedder;
  settings: RecallSettings;
  audit: AuditLogger;
  log: Logger;
  sources?: RecallSource[];
  /** Which kinds a user has at all; sources of absent kinds are skipped. */
  presence?: { kinds(userId: string, channels: string[]): Promise<Set<RecallItemKind>> };
  profile?: ProfileSource;
  reinforcer?: Reinforcer;
  /** Enables the LLM techniques (query expansion, HyDE); without it they use the offline path. */
  generator?: TextGenerator;
  /** Reorders the fused top turns when the rerank technique is on. */
  reranker?: Reranker;
}

const DAY_MS = 86_400_000;
const SOURCE_WEIGHT: Record<RecallItemKind, keyof SourceWeights> = { fact: 'facts', entity: 'entities', strategy: 'procedural', goal: 'procedural' };
const TEMPORAL_BOOST = { current: 1.2, past: 0.7, future: 1 } as const;
/** Weight of an expansion word against a word of the question (1): the top hits' shared words, the LLM's. */
const FEEDBACK_WEIGHT = 0.3;
const LLM_EXPANSION_WEIGHT = 0.5;
const MAX_LLM_TERMS = 12;
const INCLUDE: Record<RecallItemKind, keyof ParsedRecallQuery> = { fact: 'includeFacts', entity: 'includeEntities', strategy: 'includeStrategies', goal: 'includeGoals' };

/**
 * Hybrid recall over episodic memory (full-text + vector, fused by weighted RRF, then
 * neighbour scoring, speaker, time and recency boosts, diversity) and the pluggable sources.
 * All sources run in parallel, each one Neo4j round trip where possible; a failing signal or
 * source is recorded in `degraded` and the rest still answer.
 */
export class HybridRecallEngine implements RecallEngine {
  private readonly speakers: SpeakerMemo;

  constructor(private readonly d: RecallEngineDeps) {
    this.speakers = new SpeakerMemo((userId) => d.episodic.speakers(userId), {
      onRefreshError: (err) => d.log.warn({ subsystem: 'retrieval', err: errorMessage(err) }, 'speaker names not refreshed; the known ones stay'),
    });
  }

  async recall(q: ParsedRecallQuery): Promise<MemoryBundle> {
    const t0 = performance.now();
    const s = this.d.settings;
    const tech = { ...s.techniques, ...stripUndefined(q.techniques ?? {}) };
    const channels = withGlobal(q.channels);
    const asOf = q.asOf ? new Date(q.asOf) : new Date();
    const degraded: string[] = [];
    const timings: Record<string, number> = {};
    const timed = async <T>(name: string, work: () => Promise<T>, fallback: T): Promise<T> => {
      const start = performance.now();
      try {
        return await work();
      } catch (err) {
        degraded.push(`${name}: ${errorMessage(err)}`);
        this.d.log.warn({ subsystem: 'retrieval', signal: name, err: errorMessage(err) }, 'recall signal failed; answering without it');
        return fallback;
      } finally {
        timings[name] = round(performance.now() - start);
      }
    };

    // Time: hard limits from the window and filters; a self-query hint filters or boosts.
    let since = q.timeWindowHours !== undefined ? new Date(asOf.getTime() - q.timeWindowHours * 3_600_000).toISOString() : undefined;
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
    const scope = { userId: q.userId, channels, since, until, filters };
    const queryText = rulesHint ? q.query.replace(rulesHint.text, ' ') : q.query;
    const terms = keywords(queryText);
    const candidates = Math.max(s.candidates, q.topK * 3);
    const sources = (this.d.sources ?? []).filter((src) => q[INCLUDE[src.kind]] === true);

    // Turns are embedded as "speaker: content", so a name in the query pulls every turn of
    // that speaker and every turn that greets them; as in full-text, the turn search leaves
    // the names of the user's speakers out (the speaker boost uses them). The sources, whose
    // facts and entities are about those people, get the query as asked.
    const turnVector = q.includeEpisodic && tech.vector;
    // Read from the user's conversations on their first recall here, then refreshed in the background.
    const speakerNames = tech.speakerBoost ? await this.speakers.get(q.userId, (read) => timed('speakers', read, [] as string[])) : undefined;
    const embedOne = async (text: string) => (await this.d.embedder.embed([text], { priority: 'interactive', input: 'query' }))[0];
    // The text embedded (HyDE may ask an LLM for it, so it is worked out once).
    const asked = turnVector || sources.length > 0 ? this.embeddingText(q.query, q.userId, tech, degraded) : Promise.resolve(q.query);
    const turnText = asked.then((a) => (speakerNames ? withoutWords(a, speakerNames) : a));
    const turnEmbedding = turnVector ? timed('embed', async () => embedOne(await turnText), undefined) : Promise.resolve(undefined);
    // Asked while the query is embedded; unknown (no presence check, or it failed) = search all.
    const present = sources.length > 0 && this.d.presence ? timed('presence', () => this.d.presence!.kinds(q.userId, channels), undefined) : Promise.resolve(undefined);
    // The sources' vector is the turn search's when the texts agree; otherwise it is embedded
    // while Neo4j searches the turns, and only when the user holds something the sources find.
    const embedding =
      sources.length === 0
        ? Promise.resolve(undefined)
        : Promise.all([asked, turnText, present]).then(([a, t, kinds]) =>
            kinds && !sources.some((src) => kinds.has(src.kind)) ? undefined : turnVector && a === t ? turnEmbedding : timed('embedItems', () => embedOne(a), undefined),
          );

    // LLM techniques without an LLM fall back to their offline path, and say so.
    if (tech.rerank && !this.d.reranker) degraded.push('rerank: no reranker configured; fused order kept');
    let expansion = tech.queryExpansion;
    if (expansion === 'llm' && !this.d.generator) {
      degraded.push('queryExpansion: no LLM configured; using offline feedback expansion');
      expansion = 'feedback';
    }
    // Asked while the first keyword search runs; a failure leaves the offline expansion.
    const llmTerms =
      expansion === 'llm' && q.includeEpisodic && tech.fulltext && terms.length > 0
        ? timed('expansion', () => this.expansionTerms(q.query, q.userId, terms), null)
        : Promise.resolve(null);
    const fulltext =
      q.includeEpisodic && tech.fulltext && terms.length > 0
        ? timed('fulltext', () => this.fulltext(terms, scope, candidates, { expansion, llmTerms, speakers: tech.speakerBoost }), [] as TurnHit[])
        : Promise.resolve([] as TurnHit[]);
    const vector = turnVector
      ? turnEmbedding.then((e) => (e ? timed('vector', () => this.d.episodic.similarTurns(e, { ...scope, limit: candidates }), [] as TurnHit[]) : []))
      : Promise.resolve([] as TurnHit[]);
    const items = sources.map((src) =>
      Promise.all([embedding, present]).then(([e, kinds]) =>
        kinds && !kinds.has(src.kind)
          ? ([] as RecallItem[])
          : timed(src.kind, () => src.search({ userId: q.userId, channels, query: q.query, embedding: e, limit: q.topK, since, until, filters, asOf: asOf.toISOString() }), [] as RecallItem[]),
      ),
    );
    const profile = q.includeProfile && this.d.profile ? timed('profile', () => this.d.profile!.getProfile(q.userId), null) : Promise.resolve(null);

    const [ftHits, vecHits, itemLists, userProfile] = await Promise.all([fulltext, vector, Promise.all(items), profile]);
    if (!hint && llmHint) {
      hint = await llmHint;
      if (hint) time = { since: hint.since, until: hint.until, from, mode: 'boost' };
    }
    const tFuse = performance.now();
    const turns = q.includeEpisodic ? await this.fuseTurns(q, tech, ftHits, vecHits, scope, hint, asOf, degraded) : [];
    timings.fuse = round(performance.now() - tFuse);

    const byKind: Record<RecallItemKind, RecalledItem[]> = { fact: [], entity: [], strategy: [], goal: [] };
    sources.forEach((src, i) => byKind[src.kind].push(...this.rankItems(itemLists[i]!, s.weights, tech.recency, asOf)));
    for (const kind of Object.keys(byKind) as RecallItemKind[]) byKind[kind] = sortByRelevance(dedupe(byKind[kind])).slice(0, q.topK);

    const bundle: MemoryBundle = {
      query: q.query,
      userId: q.userId,
      channels,
      turns,
      facts: byKind.fact,
      entities: byKind.entity,
      strategies: byKind.strategy,
      goals: byKind.goal,
      profile: userProfile,
      time,
      degraded,
      timings,
    };
    timings.total = round(performance.now() - t0);
    this.afterRecall(q, bundle);
    return bundle;
  }

  /** The scoped Lucene query for keywords. */
  private fulltextQuery(scope: ScopeArgs, terms: string[]): string | null {
    return buildLuceneQuery(
      scope.userId,
      scope.channels,
      terms.map((term) => ({ term })),
    );
  }

  private async fulltext(
    terms: string[],
    scope: ScopeArgs,
    limit: number,
    opts: { expansion: RecallSettings['techniques']['queryExpansion']; llmTerms: Promise<string[] | null>; speakers: boolean },
  ): Promise<TurnHit[]> {
    const { expansion, speakers } = opts;
    const firstQuery = this.fulltextQuery(scope, terms);
    if (!firstQuery) return [];
    // A participant's name matches half the turns (their speaker field) and every turn that
    // greets them ("Thanks, John!"), which is mostly the other person talking. So a query
    // naming a speaker is searched without the name (the speaker boost uses it instead).
    // The user's speaker names are known from their conversations (and hits), so usually the
    // first search already leaves them out; a name learned only now costs a second search.
    const known = speakers ? this.speakers.peek(scope.userId) : undefined;
    let searched = known ? withoutOrAll(terms, known) : terms;
    const query = searched === terms ? firstQuery : this.fulltextQuery(scope, searched);
    if (!query) return [];
    let first = await this.d.episodic.fulltextSearch(query, { ...scope, limit });
    if (speakers) {
      this.speakers.add(scope.userId, first.flatMap((h) => (h.speaker ? [h.speaker] : [])));
      const kept = withoutOrAll(searched, this.speakers.peek(scope.userId) ?? new Set());
      if (kept !== searched) {
        searched = kept;
        const again = this.fulltextQuery(scope, kept);
        if (again) first = await this.d.episodic.fulltextSearch(again, { ...scope, limit });
      }
    }
    if (expansion === 'off') return first;
    // A second pass with words the question lacks: the LLM's (which may find what the first
    // pass could not), or, offline, the words the top hits share.
    const fromLlm = expansion === 'llm' ? await opts.llmTerms : null;
    let extra: Array<{ term: string; weight: number }>;
    if (fromLlm) extra = fromLlm.map((term) => ({ term, weight: LLM_EXPANSION_WEIGHT }));
    else {
      if (first.length === 0) return first;
      const top = await this.d.episodic.getTurnsByIds(first.slice(0, 5).map((h) => h.id), scope);
      extra = feedbackTerms(top.map((t) => t.content), new Set(terms)).map((term) => ({ term, weight: FEEDBACK_WEIGHT }));
    }
    if (extra.length === 0) return first;
    const expanded = buildLuceneQuery(scope.userId, scope.channels, [...searched.map((term) => ({ term })), ...extra]);
    return expanded ? this.d.episodic.fulltextSearch(expanded, { ...scope, limit }) : first;
  }

  /** Keywords an answer is likely to hold that the question does not (LLM query expansion). */
  private async expansionTerms(query: string, userId: string, terms: string[]): Promise<string[]> {
    const answer = await this.d.generator!.generate(
      'List up to 8 search keywords that a message answering this question is likely to contain but the question does not ' +
        '(synonyms, related words, likely answers). Reply with one comma-separated line and nothing else.\n' +
        `Question: ${query}`,
      { maxTokens: 60, userId },
    );
    const asked = new Set(terms);
    return [...new Set(keywords(answer))].filter((w) => !asked.has(w)).slice(0, MAX_LLM_TERMS);
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

  private async fuseTurns(
    q: ParsedRecallQuery,
    tech: RecallSettings['techniques'],
    ft: TurnHit[],
    vec: TurnHit[],
    scope: ScopeArgs,
    hint: { since: string; until: string } | undefined,
    asOf: Date,
    degraded: string[],
  ): Promise<RecalledTurn[]> {
    const s = this.d.settings;
    const hits = new Map<string, TurnHit>();
    for (const h of [...ft, ...vec]) hits.set(h.id, h);
    const raw: Record<string, Map<string, number>> = { fulltext: new Map(ft.map((h) => [h.id, h.score])), vector: new Map(vec.map((h) => [h.id, h.score])) };
    const vectorWeight = ft.length > 0 ? s.vectorWeight : 1;
    const fused =
      s.fusion === 'score'
        ? weightedScoreFusion([
            { signal: 'fulltext', weight: 1, items: ft },
            { signal: 'vector', weight: vectorWeight, items: vec },
          ])
        : weightedRrf(
            [
              { signal: 'fulltext', weight: 1, ids: ft.map((h) => h.id) },
              { signal: 'vector', weight: vectorWeight, ids: vec.map((h) => h.id) },
            ],
            s.rrfK,
          );
    const signals = new Map<string, Signals>();
    const base = new Map<string, number>();
    const queryWords = new Set(words(q.query));
    const firstPerson = [...queryWords].some((w) => FIRST_PERSON.has(w));
    const whenQuestion = tech.timeAnswerBoost && asksWhen(q.query);
    for (const f of fused) {
      const sig: Signals = {};
      for (const [name, rank] of Object.entries(f.ranks)) sig[name] = { rank, score: round(raw[name]!.get(f.id) ?? 0, 4) };
      let score = f.score;
      const hit = hits.get(f.id);
      // The speaker the query names; a question in the first person ("what car do I drive?")
      // names the user, whose own turns hold the answer rather than the assistant's.
      const named = hit?.speaker && speakerNamed(hit.speaker, queryWords) ? hit.speaker : firstPerson && hit?.role === 'user' ? 'user (first person)' : undefined;
      if (tech.speakerBoost && named) {
        score *= s.speakerBoost;
        sig.speaker = { note: named };
      }
      if (whenQuestion && hit?.dated) {
        score *= s.timeAnswerBoost;
        sig.timeAnswer = { note: 'says when' };
      }
      // A question holds the asker's words, not the information: it gives way to its reply.
      if (tech.neighbours && hit?.asks) score *= s.questionWeight;
      signals.set(f.id, sig);
      base.set(f.id, score);
    }

    const positions = new Map<string, Position>();
    for (const [id, h] of hits) positions.set(id, { conversationId: h.conversationId, index: h.index });
    const window = tech.neighbours ? Array.from({ length: s.neighbourWindow }, (_, i) => s.neighbourWeight / 2 ** i) : [];
    // Replies come after what they answer: earlier turns gain less, and a question passes its
    // whole (undemoted) match, boosted, to the turn after it.
    const pass = (from: string, d: number) => (d < 0 ? s.neighbourBackward : hits.get(from)?.asks ? s.answerBoost / s.questionWeight : 1);
    const smoothed = smoothNeighbours(base, positions, (p) => turnId(p.conversationId, p.index), window, pass);

    const nowMs = asOf.getTime();
    const halfLife = s.recencyHalfLifeDays * DAY_MS;
    let ranked = sortByScore(
      [...smoothed].map(([id, v]) => {
        const sig = signals.get(id) ?? {};
        if (v.from) sig.neighbour = { turnId: v.from, score: round(v.score - (base.get(id) ?? 0), 6) };
        let score = v.score;
        // A neighbour no signal returned is dated by the turn it came from (same conversation).
        const timestamp = (hits.get(id) ?? (v.from ? hits.get(v.from) : undefined))?.timestamp;
        if (timestamp && tech.recency) {
          const r = recencyScore(Date.parse(timestamp), nowMs, halfLife);
          score *= 1 + s.weights.recency * r;
          sig.recency = { score: round(r, 4) };
        }
        if (timestamp && hint && timestamp >= hint.since && timestamp <= hint.until) {
          score *= s.timeHintBoost;
          sig.time = { note: `${hint.since.slice(0, 10)}..${hint.until.slice(0, 10)}` };
        }
        signals.set(id, sig);
        return { id, score };
      }),
    );
    ranked = capPerGroup(ranked, (r) => parseTurnId(r.id)?.conversationId ?? r.id, tech.diversityCap);

    // One round trip for the winners' content. Neighbours are fetched with the same filters,
    // so one outside them drops out here; a margin keeps topK filled when that happens.
    const reranker = tech.rerank ? this.d.reranker : undefined;
    const head = ranked.slice(0, Math.max(q.topK + Math.min(q.topK, 20), reranker ? s.rerankDepth : 0));
    let turns = new Map<string, Turn>();
    try {
      turns = new Map((await this.d.episodic.getTurnsByIds(head.map((r) => r.id), scope)).map((t) => [t.id, t]));
    } catch (err) {
      degraded.push(`hydrate: ${errorMessage(err)}`);
    }
    let out: RecalledTurn[] = [];
    for (const r of head) {
      const turn = turns.get(r.id);
      if (turn) out.push({ turn, score: round(r.score, 6), signals: signals.get(r.id) ?? {} });
    }
    if (reranker) out = await this.rerank(reranker, q, out.slice(0, s.rerankDepth), degraded);
    return out.slice(0, q.topK);
  }

  /** The cross-encoder's order over the fused head; on failure the fused order stands. */
  private async rerank(reranker: Reranker, q: ParsedRecallQuery, head: RecalledTurn[], degraded: string[]): Promise<RecalledTurn[]> {
    let scores: number[];
    try {
      scores = await reranker.score(q.query, head.map((t) => embeddingText(t.turn)), { userId: q.userId });
    } catch (err) {
      degraded.push(`rerank: ${errorMessage(err)}; fused order kept`);
      return head;
    }
    const order = head.map((t, i) => ({ t, score: scores[i]! })).sort((a, b) => b.score - a.score);
    return order.map(({ t, score }, i) => ({ ...t, score: round(score, 6), signals: { ...t.signals, rerank: { rank: i + 1, score: round(score, 4) } } }));
  }

  private rankItems(items: RecallItem[], weights: SourceWeights, recency: boolean, asOf: Date): RecalledItem[] {
    const max = Math.max(...items.map((i) => i.score), 1e-9);
    return items.map((item, i) => {
      const w = weights[SOURCE_WEIGHT[item.kind]];
      const temporal = item.temporal ? TEMPORAL_BOOST[item.temporal] : 1;
      const r = recency && item.timestamp ? recencyScore(Date.parse(item.timestamp), asOf.getTime(), this.d.settings.recencyHalfLifeDays * DAY_MS) : 0;
      const signals: Signals = { ...item.signals, [item.kind]: { rank: i + 1, score: round(item.score, 4) } };
      if (item.temporal) signals.temporal = { note: item.temporal, score: temporal };
      return { ...item, relevance: round(w * (item.score / max) * temporal + weights.recency * r, 6), signals };
    });
  }

  /** Audit (with cross-channel hits) and reinforcement: queued, never awaited. */
  private afterRecall(q: ParsedRecallQuery, b: MemoryBundle): void {
    const active = q.channels[0]!;
    const all = [...b.turns.map((t) => ({ kind: 'turn' as const, id: t.turn.id, channel: t.turn.channel })), ...[...b.facts, ...b.entities, ...b.strategies, ...b.goals].map((i) => ({ kind: i.kind, id: i.id, channel: i.channel }))];
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
      latencyMs: b.timings.total ?? 0,
      metadata: { crossChannelHits: cross, degraded: b.degraded, timings: b.timings },
    });
    if (all.length > 0) this.d.reinforcer?.record(q.userId, all);
  }
}

interface ScopeArgs {
  userId: string;
  channels: string[];
  since?: string;
  until?: string;
  filters: TurnFilters;
}

const FIRST_PERSON = new Set(['i', 'me', 'my', 'mine', 'myself']);

/** A speaker is "named" when every word of their name is a word of the query. */
function speakerNamed(speaker: string, queryWords: Set<string>): boolean {
  const parts = words(speaker);
  return parts.length > 0 && parts.every((p) => queryWords.has(p));
}

/** Pseudo-relevance feedback: words shared by at least two of the top hits, most frequent first. */
export function feedbackTerms(texts: string[], exclude: ReadonlySet<string>, max = 5): string[] {
  const df = new Map<string, number>();
  for (const text of texts) for (const w of new Set(keywords(text))) if (!exclude.has(w) && w.length > 2 && !/^\d+$/.test(w)) df.set(w, (df.get(w) ?? 0) + 1);
  return [...df]
    .filter(([, n]) => n >= 2)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, max)
    .map(([w]) => w);
}

/** `terms` without the words in `drop`; the same array when nothing is dropped or nothing would remain. */
function withoutOrAll(terms: string[], drop: ReadonlySet<string>): string[] {
  const kept = terms.filter((t) => !drop.has(t));
  return kept.length === 0 || kept.length === terms.length ? terms : kept;
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

function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
