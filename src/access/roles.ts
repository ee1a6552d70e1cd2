/**
 * What an API key may do; the route table says which roles may call each route, and the
 * API checks it in one place before anything else runs.
 * - `admin`: every memory route of its tenant, acting for the whole tenant;
 * - `agent`: the memory routes, acting as the agent the key is bound to;
 * - `reviewer`: the audit log and statistics of its tenant, never memory content; writes nothing.
 * No imports: the browser client bundles it with the route table.
 */
export const KEY_ROLES = ['admin', 'agent', 'reviewer'] as const;
export type KeyRole = (typeof KEY_ROLES)[number];

/** Routes that read or write memory content: admin and agent keys, never reviewers. */
export const MEMORY_ROLES: readonly KeyRole[] = ['admin', 'agent'];
/** Routes that show counts and the audit trail, never memory content: reviewers too. */
export const REVIEW_ROLES: readonly KeyRole[] = ['admin', 'agent', 'reviewer'];
/** The audit log: admins and reviewers, never agent keys (an agent does not review what agents did). */
export const AUDIT_ROLES: readonly KeyRole[] = ['admin', 'reviewer'];
/**
 * Erasing a user (forget-user): the tenant's administrators only. An agent key acts as one
 * agent and may not remove what other agents hold of the user (their short-term entries,
 * their private pools); it deletes turns, conversations and facts through the memory routes.
 */
export const ERASE_ROLES: readonly KeyRole[] = ['admin'];
/** The operations report (jobs, backlogs, LLM spend, store health): the tenant's administrators only. */
export const OPS_ROLES: readonly KeyRole[] = ['admin'];
