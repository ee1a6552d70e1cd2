/**
 * Turns free user text into a safe Lucene query for Neo4j full-text indexes: every term is
 * escaped (so "C++ (beta)?" cannot raise a syntax error or inject operators) and the
 * terms are OR-ed, which is what BM25 keyword recall wants. Returns '' when no term is left.
 */
const SPECIAL = /[+\-&|!(){}[\]^"~*?:\\/]/g;
const OPERATORS = new Set(['and', 'or', 'not', 'to']);

export function luceneQuery(text: string, maxTerms = 64): string {
  const terms = text
    .split(/\s+/)
    .map((t) => t.replace(SPECIAL, ' ').trim())
    .flatMap((t) => t.split(/\s+/))
    .filter((t) => t.length > 0 && !OPERATORS.has(t.toLowerCase()));
  return [...new Set(terms)].slice(0, maxTerms).join(' OR ');
}
