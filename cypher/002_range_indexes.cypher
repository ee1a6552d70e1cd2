// 002_range_indexes: range indexes for the properties queries filter and sort on:
// user_id and channel on every user-owned label, (user_id, channel) composites, and the
// timestamps used by time windows, recency and decay.
// Parameters: none.
CREATE INDEX turn_user_time IF NOT EXISTS FOR (n:Turn) ON (n.user_id, n.timestamp);
CREATE INDEX turn_channel IF NOT EXISTS FOR (n:Turn) ON (n.channel);
CREATE INDEX turn_timestamp IF NOT EXISTS FOR (n:Turn) ON (n.timestamp);
CREATE INDEX turn_conversation_index IF NOT EXISTS FOR (n:Turn) ON (n.conversation_id, n.index);
CREATE INDEX turn_embedding_pending IF NOT EXISTS FOR (n:Turn) ON (n.embedding_pending);
CREATE INDEX conversation_user_channel IF NOT EXISTS FOR (n:Conversation) ON (n.user_id, n.channel);
CREATE INDEX conversation_channel IF NOT EXISTS FOR (n:Conversation) ON (n.channel);
CREATE INDEX conversation_started_at IF NOT EXISTS FOR (n:Conversation) ON (n.started_at);
CREATE INDEX entity_user_channel IF NOT EXISTS FOR (n:Entity) ON (n.user_id, n.channel);
CREATE INDEX entity_channel IF NOT EXISTS FOR (n:Entity) ON (n.channel);
CREATE INDEX entity_normalized_name IF NOT EXISTS FOR (n:Entity) ON (n.user_id, n.normalized_name);
CREATE INDEX entity_last_accessed IF NOT EXISTS FOR (n:Entity) ON (n.last_accessed);
CREATE INDEX fact_user_channel IF NOT EXISTS FOR (n:Fact) ON (n.user_id, n.channel);
CREATE INDEX fact_channel IF NOT EXISTS FOR (n:Fact) ON (n.channel);
CREATE INDEX fact_created_at IF NOT EXISTS FOR (n:Fact) ON (n.created_at);
CREATE INDEX fact_source_turn IF NOT EXISTS FOR (n:Fact) ON (n.source_turn_id);
CREATE INDEX goal_user_channel IF NOT EXISTS FOR (n:Goal) ON (n.user_id, n.channel);
CREATE INDEX goal_channel IF NOT EXISTS FOR (n:Goal) ON (n.channel);
CREATE INDEX goal_status IF NOT EXISTS FOR (n:Goal) ON (n.status);
CREATE INDEX strategy_user_channel IF NOT EXISTS FOR (n:Strategy) ON (n.user_id, n.channel);
CREATE INDEX strategy_channel IF NOT EXISTS FOR (n:Strategy) ON (n.channel);
CREATE INDEX tool_invocation_user_time IF NOT EXISTS FOR (n:ToolInvocation) ON (n.user_id, n.timestamp);
