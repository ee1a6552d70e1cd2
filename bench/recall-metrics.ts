/**
 * Recall metrics as the issue defines them. Pure functions over ranked turn keys
 * (`<session key>#<index>`), so they are unit-tested on hand-made cases.
 */

export interface QuestionScores {
  turn_recall_at_5?: number;
  turn_recall_at_10?: number;
  hit_at_10?: number;
  ndcg_at_10?: number;
  mrr?: number;
  session_recall_at_10?: number;
  session_any_at_5?: number;
  session_any_at_10?: number;
  /** Knowledge runs: a fact among the first 10 recalled was learned from a gold turn. */
  fact_hit_at_10?: number;
  /** Knowledge runs: the share of gold turns some fact among the first 10 was learned from. */
  fact_evidence_recall_at_10?: number;
}

export const sessionOf = (turnKey: string) => turnKey.slice(0, turnKey.lastIndexOf('#'));

/** Sessions in the order of their best (first) turn in the ranking. */
export function rankSessions(ranked: string[]): string[] {
  return [...new Set(ranked.map(sessionOf))];
}

/** Turn metrics need gold turns; session metrics need gold sessions. Missing gold -> metric absent. */
export function scoreQuestion(ranked: string[], goldTurns: string[], goldSessions: string[]): QuestionScores {
  const out: QuestionScores = {};
  if (goldTurns.length > 0) {
    const gold = new Set(goldTurns);
    const found = (k: number) => ranked.slice(0, k).filter((t) => gold.has(t)).length;
    out.turn_recall_at_5 = found(5) / gold.size;
    out.turn_recall_at_10 = found(10) / gold.size;
    out.hit_at_10 = found(10) > 0 ? 1 : 0;
    let dcg = 0;
    ranked.slice(0, 10).forEach((t, i) => {
      if (gold.has(t)) dcg += 1 / Math.log2(i + 2);
    });
    let idcg = 0;
    for (let i = 0; i < Math.min(gold.size, 10); i++) idcg += 1 / Math.log2(i + 2);
    out.ndcg_at_10 = dcg / idcg;
    const first = ranked.findIndex((t) => gold.has(t));
    out.mrr = first >= 0 ? 1 / (first + 1) : 0;
  }
  if (goldSessions.length > 0) {
    const sessions = rankSessions(ranked);
    const gold = new Set(goldSessions);
    out.session_recall_at_10 = sessions.slice(0, 10).filter((s) => gold.has(s)).length / gold.size;
    out.session_any_at_5 = sessions.slice(0, 5).some((s) => gold.has(s)) ? 1 : 0;
    out.session_any_at_10 = sessions.slice(0, 10).some((s) => gold.has(s)) ? 1 : 0;
  }
  return out;
}

/**
 * Knowledge runs: the recalled facts scored by where they were learned. `factSources` holds
 * the turn key of each recalled fact's source turn in rank order (undefined: none known).
 * Without gold turns nothing is scored; a question that recalled no fact scores 0.
 */
export function scoreFacts(factSources: Array<string | undefined>, goldTurns: string[]): QuestionScores {
  if (goldTurns.length === 0) return {};
  const gold = new Set(goldTurns);
  const found = new Set(factSources.slice(0, 10).filter((t): t is string => t !== undefined && gold.has(t)));
  return { fact_hit_at_10: found.size > 0 ? 1 : 0, fact_evidence_recall_at_10: found.size / gold.size };
}

/** Published LoCoMo protocol: a question without evidence counts 1.0. */
export function publishedSessionRecall(ranked: string[], goldSessions: string[]): number {
  if (goldSessions.length === 0) return 1;
  const top = new Set(rankSessions(ranked).slice(0, 10));
  return goldSessions.filter((s) => top.has(s)).length / goldSessions.length;
}

/** Mean of each metric over the questions that have it, with n per metric group. */
export function average(scores: QuestionScores[]): Record<string, number> {
  const sums = new Map<string, { sum: number; n: number }>();
  for (const s of scores) {
    for (const [k, v] of Object.entries(s)) {
      if (v === undefined) continue;
      const e = sums.get(k) ?? { sum: 0, n: 0 };
      e.sum += v;
      e.n += 1;
      sums.set(k, e);
    }
  }
  const out: Record<string, number> = { n: scores.length };
  for (const [k, { sum, n }] of sums) out[k] = Math.round((sum / n) * 10_000) / 10_000;
  return out;
}

export function percentiles(ms: number[]): { p50: number; p95: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (p: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!);
  return { p50: Math.round(at(0.5) * 10) / 10, p95: Math.round(at(0.95) * 10) / 10 };
}
