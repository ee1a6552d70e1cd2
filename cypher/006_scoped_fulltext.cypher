// 006_scoped_fulltext: the fact, entity and strategy full-text indexes also cover
// `scope_key` (the per-(user, channel) token turns have had since 003; see
// src/infra/fulltext-scope.ts), so a query requires its owner inside Lucene. The unscoped
// indexes of 003 are dropped: they returned every user's matches and the stores filtered
// afterwards, which for a user with few facts meant a second query of 5,000 foreign hits.
// Existing nodes get their scope_key from a backfill (src/migrate/backfills.ts).
// Parameters: none.
CREATE FULLTEXT INDEX fact_text_scoped IF NOT EXISTS FOR (n:Fact) ON EACH [n.claim, n.scope_key] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
CREATE FULLTEXT INDEX entity_text_scoped IF NOT EXISTS FOR (n:Entity) ON EACH [n.name, n.aliases_text, n.description, n.scope_key] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
CREATE FULLTEXT INDEX strategy_text_scoped IF NOT EXISTS FOR (n:Strategy) ON EACH [n.description, n.context_pattern, n.scope_key] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
DROP INDEX fact_claim_fulltext IF EXISTS;
DROP INDEX entity_text_fulltext IF EXISTS;
DROP INDEX strategy_text_fulltext IF EXISTS;
