import type { ClosedGoalStatus, GoalStatus } from './schema';

export * from './schema';
import type { AccessScope } from '../access';
import type { AccessCount } from '../infra/access-count';

/**
 * Goals: what the agent is working on for a user, with sub-goals and blockers.
 * `(:User)-[:HAS_GOAL]->(:Goal)`, `(:Goal)-[:SUBGOAL_OF]->(:Goal)`, `(:Goal)-[:BLOCKED_BY]->(:Goal)`.
 * Links only ever join goals of the same user.
 *
 * Lifecycle: `active` or `blocked` (open) -> `completed` | `abandoned` | `failed` (closed,
 * with completed_at and result). A goal is `blocked` while one of its blockers is open;
 * closing the last open blocker makes it `active` again.
 */

export interface Goal {
  id: string;
  userId: string;
  channel: string;
  description: string;
  status: GoalStatus;
  priority: number;
  createdAt: string;
  updatedAt: string;
  deadline: string | null;
  completedAt: string | null;
  result: string | null;
  parentId: string | null;
}

/** A goal with its neighbourhood, as getGoal returns it. */
export interface GoalDetails {
  goal: Goal;
  parent: Goal | null;
  subgoals: Goal[];
  /** Goals this one waits for (BLOCKED_BY), open or closed. */
  blockedBy: Goal[];
  /** Goals waiting for this one. */
  blocks: Goal[];
}

export interface AddGoalResult {
  goal: Goal;
  created: boolean;
}

export interface CompleteGoalResult {
  goal: Goal;
  /** Goals that were blocked only by this one and are active again. */
  unblocked: string[];
}

/** A goal to add; its user and channel are the scope's. */
export interface NewGoal {
  id: string;
  description: string;
  priority: number;
  deadline?: string;
  parentId?: string;
  blockedBy: string[];
  embedding?: number[];
}

/**
 * Goal memory in Neo4j. Every method takes the caller's `AccessScope` (writes go to
 * `scope.channel`, lists cover `scope.channels`); another user's goal id is "not found".
 */
export interface GoalStore {
  /**
   * Creates the goal with HAS_GOAL, SUBGOAL_OF and BLOCKED_BY in one transaction; status
   * is `blocked` when a blocker is open. Idempotent on id. Throws NotFoundError for a
   * parent or blocker that is not the caller's, before writing anything.
   */
  addGoal(scope: AccessScope, goal: NewGoal): Promise<AddGoalResult>;
  /** The goal with parent, sub-goals and blockers, or null. */
  getGoal(scope: AccessScope, goalId: string): Promise<GoalDetails | null>;
  /**
   * Closes an open goal: status, completed_at = now, result; then re-activates goals whose
   * last open blocker this was. Closing with the same status again is a no-op; closing a
   * goal closed with another status throws ValidationError. NotFoundError if not the caller's.
   */
  completeGoal(scope: AccessScope, goalId: string, status: ClosedGoalStatus, result?: string): Promise<CompleteGoalResult>;
  /**
   * Adds `(goal)-[:BLOCKED_BY]->(blocker)`; the goal becomes `blocked` if the blocker is
   * open. ValidationError when it would make a cycle or either goal is closed.
   */
  addBlocker(scope: AccessScope, goalId: string, blockerId: string): Promise<Goal>;
  /** Open goals of the user in `scope.channels`, highest priority first, then earliest deadline, then oldest. */
  listActiveGoals(scope: AccessScope, q: { includeBlocked: boolean; limit: number }): Promise<Goal[]>;
  /**
   * Open goals of the user in `scope.channels` with their cosine similarity (0-1, Neo4j's
   * normalised cosine) to `embedding`; `similarity` is null for a goal without an embedding
   * or when no embedding is given. Most similar first, then as listActiveGoals; at most `limit`.
   */
  similarActiveGoals(scope: AccessScope, q: { embedding?: number[]; limit: number }): Promise<Array<{ goal: Goal; similarity: number | null }>>;

  // Recall support (called by src/retrieval).

  /** Adds recall access counts to goals (see AccessCount); one not owned by the row's user is skipped. Returns the goals touched. */
  addAccessCounts(rows: AccessCount[]): Promise<number>;
}
