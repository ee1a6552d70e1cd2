/**
 * The turn side of recall as an open pipeline:
 *
 *   candidate generators (TURN_GENERATORS) → fusion over their lists → score stages and
 *   order stages (TURN_STAGES) → hydrate the head → rerank → topK
 *
 * A generator finds turns for one signal (full-text, vector); a stage re-scores or reorders
 * the fused candidates for one signal (speaker, neighbour, recency...). Each is one module
 * registered in one list (`generators/index.ts`, `stages/index.ts`), so the engine names no
 * signal: adding one is a module and a line.
 */
import type { AccessScope } from '../access';
import type { EpisodicStore, Turn, TurnHit, TurnWindow } from '../episodic/contract';
import { embeddingText } from '../episodic/prepare';
import { errorMessage } from '../errors';
import type { ParsedRecallQuery, RecalledTurn, RecallSettings, Signals, TextGenerator } from './contract';
import { round, sortByScore, weightedRrf, weightedScoreFusion } from './fusion';
import type { Reranker } from './rerank';
import type { TimeHint } from './self-query';
import type { SpeakerMemo } from './speaker-memo';

/** The techniques in force for one recall (configuration, then the call's overrides, then fallbacks). */
export type ResolvedTechniques = RecallSettings['techniques'];

/** What the generators use besides the query: the store, the speaker memo, the recall LLM. */
export interface TurnSearchDeps {
  episodic: Pick<EpisodicStore, 'fulltextSearch' | 'similarTurns' | 'getTurnsByIds'>;
  speakers: SpeakerMemo;
  generator?: TextGenerator;
}

/** One recall as the turn pipeline sees it, built once by the engine. */
export interface TurnRecall {
  readonly q: ParsedRecallQuery;
  /** Whose turns may be read. */
  readonly scope: AccessScope;
  /** The hard time range and metadata filters every search and the hydration apply. */
  readonly window: TurnWindow;
  readonly tech: ResolvedTechniques;
  readonly settings: RecallSettings;
  /** The moment recency and relative time expressions are read against. */
  readonly asOf: Date;
  /** The query's keywords (a time expression the rules found taken out). */
  readonly terms: string[];
  /** How many candidates each generator is asked for. */
  readonly candidates: number;
  readonly deps: TurnSearchDeps;
  /** Failed or unavailable signals, in the order they were noticed (the bundle's `degraded`). */
  readonly degraded: string[];
  /**
   * Runs `work` as the stage `name`: its milliseconds go to `timings[name]`; a rejection is
   * logged, listed in `degraded` as "name: message" and answered with `fallback`.
   */
  timed<T>(name: string, work: () => Promise<T>, fallback: T): Promise<T>;
}

/**
 * A candidate generator: one ranked list of the scope's turns for fusion.
 */
export interface CandidateGenerator {
  /** Its name in `signals` (each hit's rank and raw score), `timings` and `degraded`. */
  readonly signal: string;
  /**
   * Whether it needs the query embedding: the engine embeds the query once for every
   * generator (and the sources), starts this search once the vector is there, outside its
   * timing, and skips it when the embedder failed.
   */
  readonly usesEmbedding?: boolean;
  /** Whether it runs for this recall (its technique switch, the query's shape). Pure. */
  enabled(r: TurnRecall): boolean;
  /**
   * The scope's best turns for the query, best first, at least `r.candidates` when that many
   * match (more is allowed). May reject: the recall then goes on without this list.
   */
  search(r: TurnRecall, embedding: number[] | undefined): Promise<TurnHit[]>;
  /** Its weight in fusion, given every generator's list (by signal); 0 drops the list. */
  weight(r: TurnRecall, lists: ReadonlyMap<string, readonly TurnHit[]>): number;
}

/** A fused candidate on its way through the stages. Stages may change `score`, `signals` and `from` in place. */
export interface TurnCandidate {
  id: string;
  score: number;
  signals: Signals;
  /** The scored turn a neighbour-only candidate came from (set by the neighbour stage). */
  from?: string;
}

/** What a stage sees besides the candidates. */
export interface RankInput extends TurnRecall {
  /** Every generator's hit by turn id (a later list's hit replaces an earlier one's). */
  readonly hits: ReadonlyMap<string, TurnHit>;
  /** The self-query period to boost, when the time technique found one in boost mode. */
  readonly hint?: TimeHint;
}

/**
 * A stage of the turn ranking. `score` stages run in registration order over the fused
 * list (fused order), then the candidates are sorted by score (stable), then `order` stages
 * run over the sorted list. A stage returns the list the next one gets; it must not drop
 * candidates that it does not mean to drop.
 */
export interface TurnStage {
  /** Its name (and usually the `signals` key it writes). */
  readonly name: string;
  readonly phase: 'score' | 'order';
  /** Whether it runs for this recall (its technique switch, the query's shape). Pure. */
  enabled(r: RankInput): boolean;
  apply(candidates: TurnCandidate[], r: RankInput): TurnCandidate[];
}

/** The timestamp a candidate is dated by: its own hit's, or, for a neighbour no generator returned, that of the turn it came from. */
export function candidateTimestamp(c: TurnCandidate, r: RankInput): string | undefined {
  return (r.hits.get(c.id) ?? (c.from ? r.hits.get(c.from) : undefined))?.timestamp;
}

/**
 * Starts every enabled generator (in parallel) and returns their lists by signal, in
 * registration order; a generator that did not run or failed gives an empty list.
 */
export function generate(r: TurnRecall, generators: readonly CandidateGenerator[], embedding: () => Promise<number[] | undefined>): Promise<Map<string, TurnHit[]>> {
  const running = generators.map((g) => {
    if (!r.q.includeEpisodic || !g.enabled(r)) return Promise.resolve([] as TurnHit[]);
    if (!g.usesEmbedding) return r.timed(g.signal, () => g.search(r, undefined), [] as TurnHit[]);
    return embedding().then((e) => (e ? r.timed(g.signal, () => g.search(r, e), [] as TurnHit[]) : []));
  });
  return Promise.all(running).then((lists) => new Map(generators.map((g, i) => [g.signal, lists[i]!])));
}

/**
 * Ranks the generators' lists into the recalled turns: fusion (RECALL_FUSION: normalised
 * score or weighted RRF), the stages, hydration of the head by id (one round trip, same
 * window, so a neighbour outside it drops out), the reranker when the technique is on, topK.
 * A failed hydration or rerank is listed in `degraded` (no turns, or the fused order).
 */
export async function rankTurns(
  r: TurnRecall,
  generators: readonly CandidateGenerator[],
  lists: ReadonlyMap<string, TurnHit[]>,
  stages: readonly TurnStage[],
  opts: { hint?: TimeHint; reranker?: Reranker },
): Promise<RecalledTurn[]> {
  const s = r.settings;
  const hits = new Map<string, TurnHit>();
  for (const list of lists.values()) for (const h of list) hits.set(h.id, h);
  const input: RankInput = { ...r, hits, hint: opts.hint };

  let candidates = fuse(
    generators.map((g) => ({ signal: g.signal, weight: g.weight(r, lists), hits: lists.get(g.signal) ?? [] })),
    s,
  );
  const active = stages.filter((stage) => stage.enabled(input));
  for (const stage of active) if (stage.phase === 'score') candidates = stage.apply(candidates, input);
  candidates = sortByScore(candidates);
  for (const stage of active) if (stage.phase === 'order') candidates = stage.apply(candidates, input);

  // One round trip for the winners' content. Neighbours are fetched with the same filters,
  // so one outside them drops out here; a margin keeps topK filled when that happens.
  const reranker = r.tech.rerank ? opts.reranker : undefined;
  const head = candidates.slice(0, Math.max(r.q.topK + Math.min(r.q.topK, 20), reranker ? s.rerankDepth : 0));
  let turns = new Map<string, Turn>();
  try {
    turns = new Map(
      (
        await r.deps.episodic.getTurnsByIds(
          head.map((c) => c.id),
          r.scope,
          r.window,
        )
      ).map((t) => [t.id, t]),
    );
  } catch (err) {
    r.degraded.push(`hydrate: ${errorMessage(err)}`);
  }
  let out: RecalledTurn[] = [];
  for (const c of head) {
    const turn = turns.get(c.id);
    if (turn) out.push({ turn, score: round(c.score, 6), signals: c.signals });
  }
  if (reranker) out = await rerank(reranker, r, out.slice(0, s.rerankDepth));
  return out.slice(0, r.q.topK);
}

/** The generators' lists fused into candidates, best first, each with its rank and raw score per list. */
function fuse(lists: Array<{ signal: string; weight: number; hits: readonly TurnHit[] }>, s: RecallSettings): TurnCandidate[] {
  const raw = new Map(lists.map((l) => [l.signal, new Map(l.hits.map((h) => [h.id, h.score]))]));
  const fused =
    s.fusion === 'score'
      ? weightedScoreFusion(lists.map((l) => ({ signal: l.signal, weight: l.weight, items: [...l.hits] })))
      : weightedRrf(
          lists.map((l) => ({ signal: l.signal, weight: l.weight, ids: l.hits.map((h) => h.id) })),
          s.rrfK,
        );
  return fused.map((f) => {
    const signals: Signals = {};
    for (const [name, rank] of Object.entries(f.ranks)) signals[name] = { rank, score: round(raw.get(name)?.get(f.id) ?? 0, 4) };
    return { id: f.id, score: f.score, signals };
  });
}

/** The cross-encoder's order over the fused head; on failure the fused order stands. */
async function rerank(reranker: Reranker, r: TurnRecall, head: RecalledTurn[]): Promise<RecalledTurn[]> {
  let scores: number[];
  try {
    scores = await reranker.score(
      r.q.query,
      head.map((t) => embeddingText(t.turn)),
      { userId: r.q.userId },
    );
  } catch (err) {
    r.degraded.push(`rerank: ${errorMessage(err)}; fused order kept`);
    return head;
  }
  const order = head.map((t, i) => ({ t, score: scores[i]! })).sort((a, b) => b.score - a.score);
  return order.map(({ t, score }, i) => ({ ...t, score: round(score, 6), signals: { ...t.signals, rerank: { rank: i + 1, score: round(score, 4) } } }));
}
