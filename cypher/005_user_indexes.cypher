// 005_user_indexes: a range index on user_id alone for every user-owned label. The
// composites of 002 ((user_id, channel), (user_id, timestamp)) serve a lookup by user only
// when the query also tests the second property, so "everything this user owns" (export,
// forget-user, stats, a one-user reindex) scanned the whole label: with 10M turns, a
// forget of a user holding ten of them read all 10M.
// Parameters: none.
CREATE INDEX turn_user IF NOT EXISTS FOR (n:Turn) ON (n.user_id);
CREATE INDEX conversation_user IF NOT EXISTS FOR (n:Conversation) ON (n.user_id);
CREATE INDEX entity_user IF NOT EXISTS FOR (n:Entity) ON (n.user_id);
CREATE INDEX fact_user IF NOT EXISTS FOR (n:Fact) ON (n.user_id);
CREATE INDEX goal_user IF NOT EXISTS FOR (n:Goal) ON (n.user_id);
CREATE INDEX strategy_user IF NOT EXISTS FOR (n:Strategy) ON (n.user_id);
CREATE INDEX tool_invocation_user IF NOT EXISTS FOR (n:ToolInvocation) ON (n.user_id);
