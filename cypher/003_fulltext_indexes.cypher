// 003_fulltext_indexes: Lucene full-text indexes for keyword (BM25) recall, with the
// English analyzer (stemming, stop words). Entity aliases are indexed through
// `aliases_text`, a space-joined copy of the `aliases` list kept by the semantic store.
// Parameters: none.
CREATE FULLTEXT INDEX turn_content_fulltext IF NOT EXISTS FOR (n:Turn) ON EACH [n.content, n.search_text] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
CREATE FULLTEXT INDEX fact_claim_fulltext IF NOT EXISTS FOR (n:Fact) ON EACH [n.claim] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
CREATE FULLTEXT INDEX entity_text_fulltext IF NOT EXISTS FOR (n:Entity) ON EACH [n.name, n.aliases_text, n.description] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
CREATE FULLTEXT INDEX strategy_text_fulltext IF NOT EXISTS FOR (n:Strategy) ON EACH [n.description, n.context_pattern] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
