import type { ManagedTransaction } from 'neo4j-driver';
import type { DeletionParams } from '../access';
import { rows } from '../infra/neo4j';

/*
 * The procedural side of a delete (src/forgetting composes it): the strategies a deleted
 * conversation taught and the tool calls made in it. Statements take DeletionParams.
 */

const CONVERSATION = `MATCH (c:Conversation {id: $conversationId}) USING INDEX SEEK c:Conversation(id) WHERE c.user_id = $userId`;

// -> strategies that succeeded or failed in the conversation, with how many other conversations taught them
const STRATEGY_CANDIDATES = `${CONVERSATION}
MATCH (s:Strategy)-[:SUCCEEDED_IN|FAILED_IN]->(c) WHERE s.user_id = $userId
WITH DISTINCT s, c
RETURN s.id AS id, s.description AS description, COUNT { MATCH (s)-[:SUCCEEDED_IN|FAILED_IN]->(o:Conversation) WHERE o.id <> c.id } AS otherConversations`;

// -> the tool invocations of the conversation (or of the one turn)
const TOOL_CANDIDATES = `${CONVERSATION}
MATCH (c)-[:USED_TOOL]->(i:ToolInvocation) WHERE $index IS NULL OR i.turn_index = toInteger($index)
RETURN i.id AS id, i.tool_name AS tool`;

// $ids (strategies that stay) -> their counts lose the conversation's success or failure
const UNCOUNT_STRATEGIES = `${CONVERSATION}
UNWIND $ids AS id
MATCH (s:Strategy {id: id}) USING INDEX SEEK s:Strategy(id) WHERE s.user_id = $userId
SET s.success_count = s.success_count - CASE WHEN EXISTS { (s)-[:SUCCEEDED_IN]->(c) } THEN 1 ELSE 0 END,
    s.failure_count = s.failure_count - CASE WHEN EXISTS { (s)-[:FAILED_IN]->(c) } THEN 1 ELSE 0 END`;

const DELETE_STRATEGIES = `
UNWIND $ids AS id
MATCH (s:Strategy {id: id}) USING INDEX SEEK s:Strategy(id) WHERE s.user_id = $userId
DETACH DELETE s`;

const DELETE_INVOCATIONS = `
UNWIND $ids AS id
MATCH (i:ToolInvocation {id: id}) USING INDEX SEEK i:ToolInvocation(id) WHERE i.user_id = $userId
DETACH DELETE i`;

export interface ForgettableStrategy {
  id: string;
  description: string;
  otherConversations: number;
}

/** The procedural store's part of a delete, each in the caller's transaction. */
export const proceduralForgetting = {
  /** Strategies of a whole-conversation delete (a turn's delete leaves them). */
  strategies: (tx: ManagedTransaction, p: DeletionParams) => (p.index === null ? rows<ForgettableStrategy>(tx, STRATEGY_CANDIDATES, p) : Promise.resolve([])),
  toolInvocations: (tx: ManagedTransaction, p: DeletionParams) => rows<{ id: string; tool: string }>(tx, TOOL_CANDIDATES, p),
  async remove(tx: ManagedTransaction, p: DeletionParams, r: { uncount: string[]; deleteStrategies: string[]; deleteInvocations: string[] }): Promise<void> {
    await tx.run(UNCOUNT_STRATEGIES, { ...p, ids: r.uncount });
    await tx.run(DELETE_STRATEGIES, { ...p, ids: r.deleteStrategies });
    await tx.run(DELETE_INVOCATIONS, { ...p, ids: r.deleteInvocations });
  },
};
