// 001_constraints: one uniqueness constraint per node id (Community Edition supports
// uniqueness constraints; existence/type/node-key constraints are Enterprise only).
// Each constraint also backs a range index on the id, so lookups by id are index seeks.
// Parameters: none.
CREATE CONSTRAINT user_id_unique IF NOT EXISTS FOR (n:User) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT conversation_id_unique IF NOT EXISTS FOR (n:Conversation) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT turn_id_unique IF NOT EXISTS FOR (n:Turn) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT entity_id_unique IF NOT EXISTS FOR (n:Entity) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT fact_id_unique IF NOT EXISTS FOR (n:Fact) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT goal_id_unique IF NOT EXISTS FOR (n:Goal) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT strategy_id_unique IF NOT EXISTS FOR (n:Strategy) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT tool_name_unique IF NOT EXISTS FOR (n:Tool) REQUIRE n.name IS UNIQUE;
CREATE CONSTRAINT tool_invocation_id_unique IF NOT EXISTS FOR (n:ToolInvocation) REQUIRE n.id IS UNIQUE;
