/**
 * Rank fusion and re-scoring of candidate turns. Pure functions over ids and scores, so the
 * ordering rules are unit-tested without a database.
 */

/** One ranked list from one signal (best first). */
export interface RankedList {
  signal: string;
  /** Relative trust in this signal; a weight of 0 drops the list. */
  weight: number;
  ids: string[];
}

export interface FusedScore {
  score: number;
  /** 1-based rank of the item in each list that found it. */
  ranks: Record<string, number>;
}

/**
 * Weighted reciprocal rank fusion: score(d) = sum over lists of weight / (k + rank(d)).
 * Scale-free (BM25 and cosine scores are not comparable), and a weight < 1 lets a weaker
 * signal add candidates and break ties without out-voting a stronger one.
 * Returns items best first; ties keep first-seen order (earlier lists first).
 */
export function weightedRrf(lists: RankedList[], k = 60): Array<{ id: string } & FusedScore> {
  const fused = new Map<string, FusedScore>();
  for (const list of lists) {
    if (list.weight <= 0) continue;
    list.ids.forEach((id, i) => {
      const entry = fused.get(id) ?? { score: 0, ranks: {} };
      if (entry.ranks[list.signal] !== undefined) return; // a list naming an id twice counts once
      entry.ranks[list.signal] = i + 1;
      entry.score += list.weight / (k + i + 1);
      fused.set(id, entry);
    });
  }
  return sortByScore([...fused].map(([id, f]) => ({ id, ...f })));
}

/** One scored list from one signal (scores on the signal's own scale, higher is better). */
export interface ScoredList {
  signal: string;
  weight: number;
  items: Array<{ id: string; score: number }>;
}

/**
 * Score fusion (CombSUM of min-max-normalised scores): each list's scores are mapped to
 * [0, 1] (best = 1, the list's worst = 0), weighted and summed. Unlike RRF it keeps how far
 * ahead the top hits are (a turn matching three rare words versus one matching a common
 * word), which matters once neighbours share their scores. Ranks are reported as in RRF.
 */
export function weightedScoreFusion(lists: ScoredList[]): Array<{ id: string } & FusedScore> {
  const fused = new Map<string, FusedScore>();
  for (const list of lists) {
    if (list.weight <= 0 || list.items.length === 0) continue;
    const max = Math.max(...list.items.map((i) => i.score));
    const min = Math.min(...list.items.map((i) => i.score));
    const span = max - min;
    list.items.forEach((item, i) => {
      const entry = fused.get(item.id) ?? { score: 0, ranks: {} };
      if (entry.ranks[list.signal] !== undefined) return;
      entry.ranks[list.signal] = i + 1;
      // A list whose hits all score alike (one hit, or a tie) has only best hits.
      entry.score += list.weight * (span > 0 ? (item.score - min) / span : 1);
      fused.set(item.id, entry);
    });
  }
  return sortByScore([...fused].map(([id, f]) => ({ id, ...f })));
}

/** Where a turn sits in its conversation. */
export interface Position {
  conversationId: string;
  index: number;
}

/**
 * Scores neighbouring turns together: each turn gains, for every scored turn within the
 * window, `weights[|d| - 1]` times that turn's score times `pass(from, d)` (d = the signed
 * distance from the scored turn to its neighbour, in the same conversation; `pass` defaults
 * to 1, so both directions count alike; 0 means the turn at d is not a neighbour).
 * An answer usually sits next to the turns that matched the words of a question ("What did
 * you paint?" / "A sunrise."), and a run of matching turns is stronger evidence than one
 * turn alone; a neighbour that no signal found enters the candidates this way.
 * `positions` must cover every scored id; returns scores for the scored ids and their
 * neighbours, with `from` naming the neighbour that contributed most.
 */
export function smoothNeighbours(
  scores: Map<string, number>,
  positions: Map<string, Position>,
  idAt: (p: Position) => string,
  weights: number[],
  pass: (from: string, d: number) => number = () => 1,
): Map<string, { score: number; from?: string }> {
  const out = new Map<string, { score: number; from?: string; best?: number }>();
  for (const [id, s] of scores) out.set(id, { score: s });
  for (const [id, s] of scores) {
    const p = positions.get(id);
    if (!p) continue;
    weights.forEach((w, i) => {
      if (w <= 0) return;
      for (const d of [-(i + 1), i + 1]) {
        if (p.index + d < 0) continue;
        const share = pass(id, d);
        if (share === 0) continue; // not a neighbour in this direction or at this distance
        const target = idAt({ conversationId: p.conversationId, index: p.index + d });
        const gain = w * s * share;
        const entry = out.get(target) ?? { score: 0 };
        entry.score += gain;
        if (entry.best === undefined || gain > entry.best) {
          entry.best = gain;
          entry.from = id;
        }
        out.set(target, entry);
      }
    });
  }
  return new Map([...out].map(([id, e]) => [id, e.from === undefined ? { score: e.score } : { score: e.score, from: e.from }]));
}

/**
 * Diversity: keeps at most `cap` items per group (e.g. per conversation), preserving order;
 * items over the cap move behind the others rather than disappearing. cap <= 0 disables it.
 */
export function capPerGroup<T>(items: T[], groupOf: (t: T) => string, cap: number): T[] {
  if (cap <= 0) return items;
  const counts = new Map<string, number>();
  const kept: T[] = [];
  const deferred: T[] = [];
  for (const item of items) {
    const g = groupOf(item);
    const n = counts.get(g) ?? 0;
    if (n < cap) {
      kept.push(item);
      counts.set(g, n + 1);
    } else deferred.push(item);
  }
  return [...kept, ...deferred];
}

/** exp(-ln2 · age / halfLife): 1 for "now", 0.5 one half-life earlier. */
export function recencyScore(timestampMs: number, nowMs: number, halfLifeMs: number): number {
  const age = Math.max(0, nowMs - timestampMs);
  return Math.exp((-Math.LN2 * age) / halfLifeMs);
}

/** Stable sort by score, best first. */
export function sortByScore<T extends { score: number }>(items: T[]): T[] {
  return items
    .map((item, i) => ({ item, i }))
    .sort((a, b) => b.item.score - a.item.score || a.i - b.i)
    .map((x) => x.item);
}

/** `n` rounded to `digits` decimals (scores and timings as the bundle reports them). */
export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
