// 003_fulltext_indexes: Lucene full-text indexes for keyword (BM25) recall, with the
// English analyzer (stemming, stop words). Entity aliases are indexed through
// `aliases_text`, a space-joined copy of the `aliases` list kept by the semantic store.
// Turns also index `scope_key`, a per-(user, channel) token written by the episodic store,
// so a recall query requires its owner inside Lucene (`+scope_key:(...)`): the top hits
// are always the user's own, however many other users the database holds.
// Parameters: none.
CREATE FULLTEXT INDEX turn_content_fulltext IF NOT EXISTS FOR (n:Turn) ON EACH [n.content, n.search_text, n.scope_key] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
CREATE FULLTEXT INDEX fact_claim_fulltext IF NOT EXISTS FOR (n:Fact) ON EACH [n.claim] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
CREATE FULLTEXT INDEX entity_text_fulltext IF NOT EXISTS FOR (n:Entity) ON EACH [n.name, n.aliases_text, n.description] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
CREATE FULLTEXT INDEX strategy_text_fulltext IF NOT EXISTS FOR (n:Strategy) ON EACH [n.description, n.context_pattern] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
