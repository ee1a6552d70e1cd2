import { NotFoundError, ValidationError } from '../errors';
import { rows, type CypherRunner } from '../infra/neo4j';
import { addAccessCountsCypher, type AccessCount } from '../infra/access-count';
import { CLOSED_GOAL_STATUSES, type AddGoalResult, type ClosedGoalStatus, type CompleteGoalResult, type Goal, type GoalDetails, type GoalStore, type NewGoal } from './contract';
import type { AccessScope } from '../access';

const TAG = (op: string) => ({ subsystem: 'goals', op });

/**
 * Cypher expression over $userId, $channels: whether the user holds any goal in those channels
 * (an index seek). Recall's knowledge presence asks it with the other stores' in one query.
 */
export const GOAL_PRESENCE = 'EXISTS { MATCH (n:Goal) WHERE n.user_id = $userId AND n.channel IN $channels }';
const OPEN = ['active', 'blocked'];

// Projection of a Goal node `g` (parent id from SUBGOAL_OF).
const GOAL = `{ id: g.id, userId: g.user_id, channel: g.channel, description: g.description, status: g.status, priority: g.priority,
  createdAt: toString(g.created_at), updatedAt: toString(g.updated_at), deadline: toString(g.deadline),
  completedAt: toString(g.completed_at), result: g.result, parentId: COLLECT { MATCH (g)-[:SUBGOAL_OF]->(p:Goal) RETURN p.id LIMIT 1 }[0] }`;

// $id -> {userId}: who owns a goal id
const GOAL_OWNER = `MATCH (g:Goal {id: $id}) RETURN g.user_id AS userId`;
// $userId, $ids -> {id, status}: the user's goals among $ids
const OWNED_GOALS = `UNWIND $ids AS gid MATCH (g:Goal {id: gid}) USING INDEX SEEK g:Goal(id) WHERE g.user_id = $userId RETURN g.id AS id, g.status AS status`;
// $userId, $goalId -> {goal}
const GET_GOAL = `MATCH (g:Goal {id: $goalId}) USING INDEX SEEK g:Goal(id) WHERE g.user_id = $userId RETURN ${GOAL} AS goal`;

// $row -> {goal}: the goal with HAS_GOAL, SUBGOAL_OF and BLOCKED_BY
const CREATE_GOAL = `
MERGE (u:User {id: $row.userId})
CREATE (g:Goal {id: $row.id, user_id: $row.userId, channel: $row.channel, description: $row.description, status: $row.status,
  priority: toInteger($row.priority), created_at: datetime(), updated_at: datetime(),
  deadline: CASE WHEN $row.deadline IS NULL THEN null ELSE datetime($row.deadline) END})
CREATE (u)-[:HAS_GOAL]->(g)
WITH g
CALL (g) { MATCH (p:Goal {id: $row.parentId}) MERGE (g)-[:SUBGOAL_OF]->(p) }
CALL (g) { UNWIND $row.blockedBy AS bid MATCH (b:Goal {id: bid}) MERGE (g)-[:BLOCKED_BY]->(b) }
CALL (g) { WITH g WHERE $row.embedding IS NOT NULL CALL db.create.setNodeVectorProperty(g, 'embedding', $row.embedding) }
RETURN ${GOAL} AS goal`;

// $userId, $goalId -> {parent, subgoals, blockedBy, blocks}: the goal's neighbourhood
const NEIGHBOURS = `
MATCH (x:Goal {id: $goalId}) USING INDEX SEEK x:Goal(id) WHERE x.user_id = $userId
RETURN
  COLLECT { MATCH (x)-[:SUBGOAL_OF]->(g:Goal) RETURN ${GOAL} } AS parents,
  COLLECT { MATCH (g:Goal)-[:SUBGOAL_OF]->(x) RETURN ${GOAL} ORDER BY g.created_at } AS subgoals,
  COLLECT { MATCH (x)-[:BLOCKED_BY]->(g:Goal) RETURN ${GOAL} ORDER BY g.created_at } AS blockedBy,
  COLLECT { MATCH (g:Goal)-[:BLOCKED_BY]->(x) RETURN ${GOAL} ORDER BY g.created_at } AS blocks`;

// $userId, $goalId, $status, $result -> {goal}: closes an open goal
const CLOSE_GOAL = `
MATCH (g:Goal {id: $goalId}) USING INDEX SEEK g:Goal(id) WHERE g.user_id = $userId AND g.status IN ['active', 'blocked']
SET g.status = $status, g.result = $result, g.completed_at = datetime(), g.updated_at = datetime()
RETURN ${GOAL} AS goal`;

// $goalId -> {id}: goals blocked only by closed goals now, made active again
const UNBLOCK = `
MATCH (w:Goal)-[:BLOCKED_BY]->(:Goal {id: $goalId}) WHERE w.status = 'blocked'
  AND NOT EXISTS { (w)-[:BLOCKED_BY]->(o:Goal) WHERE o.status IN ['active', 'blocked'] }
SET w.status = 'active', w.updated_at = datetime()
RETURN w.id AS id ORDER BY id`;

// $goalId, $blockerId -> {cycle}: whether the blocker already waits (transitively) on the goal
const WOULD_CYCLE = `
MATCH (b:Goal {id: $blockerId}), (g:Goal {id: $goalId})
RETURN b = g OR EXISTS { (b)-[:BLOCKED_BY*1..50]->(g) } AS cycle`;

// $goalId, $blockerId -> {goal}: adds BLOCKED_BY; blocked while the blocker is open
const ADD_BLOCKER = `
MATCH (g:Goal {id: $goalId}), (b:Goal {id: $blockerId})
MERGE (g)-[:BLOCKED_BY]->(b)
SET g.status = CASE WHEN b.status IN ['active', 'blocked'] THEN 'blocked' ELSE g.status END, g.updated_at = datetime()
RETURN ${GOAL} AS goal`;

// $userId, $channels, $statuses, $limit -> {goal}: open goals, highest priority, then earliest deadline, then oldest
const ACTIVE_GOALS = `
MATCH (g:Goal) WHERE g.user_id = $userId AND g.channel IN $channels AND g.status IN $statuses
RETURN ${GOAL} AS goal ORDER BY g.priority DESC, g.deadline ASC, g.created_at ASC, g.id LIMIT toInteger($limit)`;

// $userId, $channels, $embedding, $limit -> {goal, similarity}: open goals, most similar to the query first
// (a user has few open goals, so an exact scan of them beats the shared vector index)
const SIMILAR_ACTIVE_GOALS = `
MATCH (g:Goal) WHERE g.user_id = $userId AND g.channel IN $channels AND g.status IN ['active', 'blocked']
WITH g, CASE WHEN $embedding IS NULL OR g.embedding IS NULL OR size(g.embedding) <> size($embedding) THEN null
  ELSE vector.similarity.cosine(g.embedding, $embedding) END AS similarity
RETURN ${GOAL} AS goal, similarity
ORDER BY coalesce(similarity, -1) DESC, g.priority DESC, g.deadline ASC, g.created_at ASC, g.id LIMIT toInteger($limit)`;

export class Neo4jGoalStore implements GoalStore {
  constructor(private readonly db: CypherRunner) {}

  addGoal(scope: AccessScope, goal: NewGoal): Promise<AddGoalResult> {
    const { userId, channel } = scope;
    return this.db.writeTx(async (tx) => {
      const [owner] = await rows<{ userId: string }>(tx, GOAL_OWNER, { id: goal.id });
      if (owner) {
        if (owner.userId !== userId) throw new ValidationError(`goal id ${goal.id} is already in use; choose another id`, { id: goal.id });
        const [row] = await rows<{ goal: Goal }>(tx, GET_GOAL, { userId, goalId: goal.id });
        return { goal: row!.goal, created: false };
      }
      const refs = [...new Set([...(goal.parentId ? [goal.parentId] : []), ...goal.blockedBy])];
      const found = refs.length > 0 ? await rows<{ id: string; status: string }>(tx, OWNED_GOALS, { userId, ids: refs }) : [];
      const first = refs.find((id) => !found.some((f) => f.id === id));
      if (first) throw new NotFoundError('goal', first);
      const blocked = found.some((f) => goal.blockedBy.includes(f.id) && OPEN.includes(f.status));
      const [row] = await rows<{ goal: Goal }>(tx, CREATE_GOAL, {
        row: { ...goal, userId, channel, status: blocked ? 'blocked' : 'active', deadline: goal.deadline ?? null, parentId: goal.parentId ?? null, embedding: goal.embedding ?? null },
      });
      return { goal: row!.goal, created: true };
    }, TAG('addGoal'));
  }

  async getGoal(scope: AccessScope, goalId: string): Promise<GoalDetails | null> {
    const { userId } = scope;
    const tag = TAG('getGoal');
    const [row] = await this.db.read<{ goal: Goal }>(GET_GOAL, { userId, goalId }, tag);
    if (!row) return null;
    const [n] = await this.db.read<{ parents: Goal[]; subgoals: Goal[]; blockedBy: Goal[]; blocks: Goal[] }>(NEIGHBOURS, { userId, goalId }, tag);
    return { goal: row.goal, parent: n?.parents[0] ?? null, subgoals: n?.subgoals ?? [], blockedBy: n?.blockedBy ?? [], blocks: n?.blocks ?? [] };
  }

  completeGoal(scope: AccessScope, goalId: string, status: ClosedGoalStatus, result?: string): Promise<CompleteGoalResult> {
    const { userId } = scope;
    return this.db.writeTx(async (tx) => {
      const [closed] = await rows<{ goal: Goal }>(tx, CLOSE_GOAL, { userId, goalId, status, result: result ?? null });
      if (!closed) {
        const [current] = await rows<{ goal: Goal }>(tx, GET_GOAL, { userId, goalId });
        if (!current) throw new NotFoundError('goal', goalId);
        if (current.goal.status === status) return { goal: current.goal, unblocked: [] };
        throw new ValidationError(`goal ${goalId} is already ${current.goal.status}; it cannot become ${status}`, { id: goalId, status: current.goal.status });
      }
      const unblocked = (await rows<{ id: string }>(tx, UNBLOCK, { goalId })).map((r) => r.id);
      return { goal: closed.goal, unblocked };
    }, TAG('completeGoal'));
  }

  addBlocker(scope: AccessScope, goalId: string, blockerId: string): Promise<Goal> {
    const { userId } = scope;
    return this.db.writeTx(async (tx) => {
      const found = await rows<{ id: string; status: string }>(tx, OWNED_GOALS, { userId, ids: [goalId, blockerId] });
      for (const id of [goalId, blockerId]) if (!found.some((f) => f.id === id)) throw new NotFoundError('goal', id);
      const goal = found.find((f) => f.id === goalId)!;
      if ((CLOSED_GOAL_STATUSES as readonly string[]).includes(goal.status)) throw new ValidationError(`goal ${goalId} is ${goal.status}; only open goals can be blocked`, { id: goalId });
      const [c] = await rows<{ cycle: boolean }>(tx, WOULD_CYCLE, { goalId, blockerId });
      if (c?.cycle) throw new ValidationError(`goal ${blockerId} already waits on ${goalId}; blocking would make a cycle`, { goalId, blockerId });
      const [row] = await rows<{ goal: Goal }>(tx, ADD_BLOCKER, { goalId, blockerId });
      return row!.goal;
    }, TAG('addBlocker'));
  }

  async listActiveGoals(scope: AccessScope, q: { includeBlocked: boolean; limit: number }): Promise<Goal[]> {
    const statuses = q.includeBlocked ? OPEN : ['active'];
    const found = await this.db.read<{ goal: Goal }>(ACTIVE_GOALS, { userId: scope.userId, channels: scope.channels, statuses, limit: q.limit }, TAG('listActiveGoals'));
    return found.map((r) => r.goal);
  }

  async similarActiveGoals(scope: AccessScope, q: { embedding?: number[]; limit: number }): Promise<Array<{ goal: Goal; similarity: number | null }>> {
    return this.db.read<{ goal: Goal; similarity: number | null }>(
      SIMILAR_ACTIVE_GOALS,
      { userId: scope.userId, channels: scope.channels, embedding: q.embedding ?? null, limit: q.limit },
      TAG('similarActiveGoals'),
    );
  }

  // ---------------------------------------------------------------- recall support

  async addAccessCounts(rows: AccessCount[]): Promise<number> {
    if (rows.length === 0) return 0;
    return (await this.db.write<{ n: number }>(ADD_ACCESS_COUNTS, { rows }, TAG('addAccessCounts')))[0]?.n ?? 0;
  }
}

// ---------------------------------------------------------------- recall support

// $rows: [AccessCount] -> {n}
const ADD_ACCESS_COUNTS = addAccessCountsCypher('Goal');
