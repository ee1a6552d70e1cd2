import type { RecalledItem, RecalledTurn } from './contract';
import { round } from './fusion';

/**
 * Recall prefers what is current (issue #20, item 3). Pure: the engine calls these on the
 * ranked facts and turns of one bundle.
 *
 * - `questionTense`: is the question about the present ("where does Dana work?"), the past
 *   ("where did she work before?"), or neither?
 * - `TEMPORAL_BOOST`: how much a fact's temporal tag weighs for that tense.
 * - `preferCurrent`: a past fact (ended, superseded) never ranks above a current fact of the
 *   same predicate unless the question is about the past.
 * - `liftChangeTurns`: the turn that said the current value (it changed the fact) ranks above
 *   the turns that said the superseded values, and is brought into the bundle when the turn
 *   search missed it.
 */

export type Tense = 'present' | 'past' | 'neutral';

const PAST =
  /\b(?:did|was|were|had|used to|before|previously|formerly|former|earlier|originally|back then|at the time|ago|last (?:year|month|week|time)|in the past|worked|lived|moved|studied|owned|played|liked|loved|joined|left|started|stopped|sold)\b/i;
const PRESENT = /\b(?:is|are|am|does|do|now|currently|these days|nowadays|today|still|at the moment|right now|'s|'re)\b/i;

/** The tense a question asks in; past wins over present ("where does she work now that she left X?" stays present only without a past cue). */
export function questionTense(query: string): Tense {
  const q = query.toLowerCase();
  if (PAST.test(q)) return 'past';
  if (PRESENT.test(q)) return 'present';
  return 'neutral';
}

/** Weight of a fact's temporal tag by the question's tense (neutral keeps the long-standing 1.2 / 0.7). */
export const TEMPORAL_BOOST: Record<Tense, Record<'current' | 'past' | 'future', number>> = {
  present: { current: 1.3, past: 0.5, future: 1 },
  neutral: { current: 1.2, past: 0.7, future: 1 },
  past: { current: 1, past: 1.2, future: 0.8 },
};

/** A past fact stays at most this share of the best current fact of its predicate. */
const PAST_CAP = 0.9;

function predicateOf(item: RecalledItem): string | undefined {
  const p = item.data?.predicate;
  return typeof p === 'string' && p !== '' ? p : undefined;
}

/**
 * Facts best first, with every past fact of a predicate that also has a current fact in the
 * list held below that current fact (relevance capped at 0.9 × the best current one's;
 * `signals.current` names the fact it yields to). A question about the past changes nothing.
 */
export function preferCurrent(facts: RecalledItem[], tense: Tense): RecalledItem[] {
  if (tense === 'past') return facts;
  const best = new Map<string, RecalledItem>();
  for (const f of facts) {
    const p = predicateOf(f);
    if (!p || f.temporal !== 'current') continue;
    const prev = best.get(p);
    if (!prev || f.relevance > prev.relevance) best.set(p, f);
  }
  if (best.size === 0) return facts;
  const out = facts.map((f) => {
    const p = predicateOf(f);
    const current = p && f.temporal === 'past' ? best.get(p) : undefined;
    if (!current || f.relevance < current.relevance * PAST_CAP) return f;
    const relevance = round(current.relevance * PAST_CAP, 6);
    return { ...f, relevance, signals: { ...f.signals, current: { note: `below current ${current.id}`, ...(f.relevance > 0 ? { score: round(relevance / f.relevance, 4) } : {}) } } };
  });
  return out.sort((a, b) => b.relevance - a.relevance);
}

/** Which recalled turns said a current value that replaced another, and which said a replaced one. */
export function changeTurns(facts: RecalledItem[]): { changed: Set<string>; stale: Set<string> } {
  const turnOf = (f: RecalledItem) => (typeof f.data?.sourceTurnId === 'string' ? f.data.sourceTurnId : undefined);
  const pastPredicates = new Set(facts.filter((f) => f.temporal === 'past').map(predicateOf));
  const changed = new Set<string>();
  for (const f of facts) {
    const t = turnOf(f);
    if (!t) continue;
    // The current value of a predicate that also has a past value here, or the statement that ended one.
    if ((f.temporal === 'current' && pastPredicates.has(predicateOf(f))) || f.data?.ends === true) changed.add(t);
  }
  const stale = new Set<string>();
  for (const f of facts) {
    const t = turnOf(f);
    if (t && f.data?.status === 'superseded' && !changed.has(t)) stale.add(t);
  }
  return { changed, stale };
}

/**
 * Turns reordered so the turns that changed a fact rank above the turns that said its
 * superseded value: a stale turn's score is halved (`signals.stale`), a change turn's raised
 * to just above the best stale one (`signals.changed`); `missing` are change turns the turn
 * search did not return, hydrated by the caller, and they take the place of the weakest turns
 * so the list keeps at most `topK`. Nothing changes when no recalled fact records a change.
 */
export function liftChangeTurns(turns: RecalledTurn[], facts: RecalledItem[], missing: RecalledTurn['turn'][], topK: number): RecalledTurn[] {
  const { changed, stale } = changeTurns(facts);
  if (changed.size === 0) return turns;
  const staleTop = Math.max(0, ...turns.filter((t) => stale.has(t.turn.id)).map((t) => t.score));
  const floor = turns.length > 0 ? Math.min(...turns.map((t) => t.score)) : 1;
  const lifted = (score: number) => Math.max(score, staleTop > 0 ? staleTop * 1.01 : floor);
  const out: RecalledTurn[] = turns.map((t) => {
    if (changed.has(t.turn.id)) {
      const score = lifted(t.score);
      if (score === t.score) return { ...t, signals: { ...t.signals, changed: { note: 'said the current value' } } };
      return { ...t, score: round(score, 6), signals: { ...t.signals, changed: { note: 'said the current value', ...(t.score > 0 ? { score: round(score / t.score, 4) } : {}) } } };
    }
    if (stale.has(t.turn.id)) return { ...t, score: round(t.score * 0.5, 6), signals: { ...t.signals, stale: { note: 'said a superseded value', score: 0.5 } } };
    return t;
  });
  const have = new Set(turns.map((t) => t.turn.id));
  for (const turn of missing) {
    if (have.has(turn.id) || !changed.has(turn.id)) continue;
    out.push({ turn, score: round(lifted(0), 6), signals: { changed: { note: 'said the current value' } } });
  }
  const sorted = out.map((t, i) => ({ t, i })).sort((a, b) => b.t.score - a.t.score || a.i - b.i);
  // Keep topK, never dropping a change turn for an ordinary one.
  const keep = sorted.slice(0, topK);
  for (const extra of sorted.slice(topK)) {
    if (!changed.has(extra.t.turn.id)) continue;
    const weakest = keep
      .map((k, idx) => ({ k, idx }))
      .reverse()
      .find(({ k }) => !changed.has(k.t.turn.id));
    if (weakest) keep.splice(weakest.idx, 1, extra);
  }
  return keep.sort((a, b) => b.t.score - a.t.score || a.i - b.i).map((x) => x.t);
}
