import type { SearchTerm } from '../../episodic/contract';
import { keywords } from '../query-text';
import type { CandidateGenerator, TurnRecall } from '../turn-pipeline';

/** Weight of an expansion word against a word of the question (1): the top hits' shared words, the LLM's. */
const FEEDBACK_WEIGHT = 0.3;
const LLM_EXPANSION_WEIGHT = 0.5;
const MAX_LLM_TERMS = 12;

/**
 * Full-text candidates: BM25 over the turns' content and search text (`turn_content_fulltext`)
 * for the query's keywords, without the names of the user's speakers (the speaker stage uses
 * them); with query expansion, a second pass that adds the LLM's words or, offline, the words
 * the top hits share. Signal `fulltext`, weight 1. Settings: RECALL_FULLTEXT,
 * RECALL_QUERY_EXPANSION (and RECALL_SPEAKER_BOOST for leaving names out).
 */
export const fulltextGenerator: CandidateGenerator = {
  signal: 'fulltext',
  enabled: (r) => r.tech.fulltext && r.terms.length > 0,
  weight: () => 1,
  async search(r) {
    const { terms, tech, scope } = r;
    const { episodic, speakers } = r.deps;
    const expansion = tech.queryExpansion;
    const q = { ...r.window, limit: r.candidates };
    // Asked while the first keyword search runs; a failure leaves the offline expansion.
    const llmTerms = expansion === 'llm' ? r.timed('expansion', () => expansionTerms(r), null) : Promise.resolve(null);
    // A participant's name matches half the turns (their speaker field) and every turn that
    // greets them ("Thanks, John!"), which is mostly the other person talking. So a query
    // naming a speaker is searched without the name (the speaker boost uses it instead).
    // The user's speaker names are known from their conversations (and hits), so usually the
    // first search already leaves them out; a name learned only now costs a second search.
    const known = tech.speakerBoost ? speakers.peek(scope.userId) : undefined;
    let searched = known ? withoutOrAll(terms, known) : terms;
    let first = await episodic.fulltextSearch(plain(searched), scope, q);
    if (tech.speakerBoost) {
      speakers.add(
        scope.userId,
        first.flatMap((h) => (h.speaker ? [h.speaker] : [])),
      );
      const kept = withoutOrAll(searched, speakers.peek(scope.userId) ?? new Set());
      if (kept !== searched) {
        searched = kept;
        first = await episodic.fulltextSearch(plain(kept), scope, q);
      }
    }
    if (expansion === 'off') return first;
    // A second pass with words the question lacks: the LLM's (which may find what the first
    // pass could not), or, offline, the words the top hits share.
    const fromLlm = expansion === 'llm' ? await llmTerms : null;
    let extra: SearchTerm[];
    if (fromLlm) extra = fromLlm.map((term) => ({ term, weight: LLM_EXPANSION_WEIGHT }));
    else {
      if (first.length === 0) return first;
      const top = await episodic.getTurnsByIds(
        first.slice(0, 5).map((h) => h.id),
        scope,
        r.window,
      );
      extra = feedbackTerms(
        top.map((t) => t.content),
        new Set(terms),
      ).map((term) => ({ term, weight: FEEDBACK_WEIGHT }));
    }
    if (extra.length === 0) return first;
    return episodic.fulltextSearch([...plain(searched), ...extra], scope, q);
  },
};

function plain(terms: string[]): SearchTerm[] {
  return terms.map((term) => ({ term }));
}

/** Keywords an answer is likely to hold that the question does not (LLM query expansion). */
async function expansionTerms(r: TurnRecall): Promise<string[]> {
  const answer = await r.deps.generator!.generate(
    'List up to 8 search keywords that a message answering this question is likely to contain but the question does not ' +
      '(synonyms, related words, likely answers). Reply with one comma-separated line and nothing else.\n' +
      `Question: ${r.q.query}`,
    { maxTokens: 60, userId: r.q.userId },
  );
  const asked = new Set(r.terms);
  return [...new Set(keywords(answer))].filter((w) => !asked.has(w)).slice(0, MAX_LLM_TERMS);
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
