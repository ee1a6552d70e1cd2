/**
 * Turning a natural-language question into keyword-search input. Pure functions.
 *
 * Question words, auxiliaries and pronouns carry no topic, yet Lucene's English stop list
 * keeps most of them ("what", "did", "she"...), and in conversational text they are common
 * enough to drown the content words; so they are dropped before the query is built.
 * Lucene syntax is the stores' business (src/infra/fulltext-scope.ts): these are plain words.
 */
const QUERY_STOPWORDS = new Set(
  (
    'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with ' +
    'what when where which who whom whose why how did do does done doing has have had having were am been being ' +
    'i me my mine myself you your yours yourself he him his himself she her hers herself we us our ours they them theirs themselves its ' +
    'would could should can shall might must ever also just very so than too any some about from up down out over under again ' +
    'there here s t d ll m re ve don didn doesn isn wasn aren weren won wouldn couldn shouldn hasn haven hadn ' +
    'tell know remember say said mention mentioned ask asked'
  ).split(/\s+/),
);

/** Lower-cased word tokens (letters and digits) of `text`, in order. */
export function words(text: string): string[] {
  return (
    text
      .toLowerCase()
      .normalize('NFKC')
      .match(/[\p{L}\p{N}]+/gu) ?? []
  ).filter((w) => w.length > 0);
}

/**
 * `text` without the words in `drop` (lower-case words; a possessive "'s" goes with its
 * word), spacing tidied; `text` itself when nothing is dropped or nothing would remain.
 */
export function withoutWords(text: string, drop: ReadonlySet<string>): string {
  let dropped = false;
  const kept = text
    .replace(/[\p{L}\p{N}]+(?:['’]s)?/gu, (w) => {
      if (
        !drop.has(
          w
            .toLowerCase()
            .normalize('NFKC')
            .replace(/['’]s$/u, ''),
        )
      )
        return w;
      dropped = true;
      return '';
    })
    .replace(/\s+([?,.!])/g, '$1')
    .replace(/[,;]+([?.!])/g, '$1')
    .replace(/\s{2,}/g, ' ')
    .trim();
  return dropped && words(kept).length > 0 ? kept : text;
}

/** The topical keywords of a query: words minus stop words and one-letter tokens, deduplicated. */
export function keywords(text: string, drop: ReadonlySet<string> = new Set()): string[] {
  const seen = new Set<string>();
  for (const w of words(text)) {
    if (w.length < 2 && !/\d/.test(w)) continue;
    if (QUERY_STOPWORDS.has(w) || drop.has(w)) continue;
    seen.add(w);
  }
  return [...seen];
}

const QUESTION_OPENER =
  /^\s*(?:what|which|who|whom|whose|where|when|why|how)\b(?:\s+(?:is|are|was|were|did|does|do|has|have|had|can|could|would|will|might|should|kind of|type of|types of|sort of|many|much|long|often|far|old))*\s*/i;

/**
 * The statement form of a question, for embedding it: the question word, its auxiliaries and
 * the question mark go ("What did Melanie paint recently?" -> "Melanie paint recently").
 * A sentence encoder places a question near other questions ("What do you like to paint?"),
 * while the memory that answers it is a statement; the statement form lands near that.
 * Other text only loses a trailing question mark; never returns "".
 */
export function statementForm(query: string): string {
  const stripped = query
    .replace(/[?\s]+$/u, '')
    .replace(QUESTION_OPENER, '')
    .trim();
  return stripped.length > 0 ? stripped : query.trim();
}

const ASKS_WHEN =
  /^\s*(?:(?:and|so|but)\s+)?(?:when\b|since when\b|until when\b|how long\b|(?:what|which) (?:year|month|week|day|date|time)(?![\w-])|in (?:what|which) (?:year|month)\b|how many (?:days|weeks|months|years)\b|after how many\b)|\bwhen (?:did|was|were|is|are|will|do|does|had|has)\b/i;

/**
 * Whether a question asks for a time ("When did...?", "How long has...?", "What year...?"):
 * then a turn that says when ("yesterday", "in May") is likelier to hold the answer.
 */
export function asksWhen(query: string): boolean {
  return ASKS_WHEN.test(query);
}
