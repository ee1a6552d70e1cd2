import type { AccessScope } from '../access';
import type { AuditLogger } from '../audit';
import type { ConversationBrowser, TurnLog } from '../episodic/contract';
import type { PgProfileStore, ProfileEntry } from '../observations/profile';
import type { ToolInvocationLog } from '../procedural/contract';
import { sessionScope, type WorkingMemoryStore } from '../working/contract';
import type { DeletionTarget, DerivedItem, DerivedKnowledgeStore, ForgetOptions, ForgetPlan } from './contract';
import { toPlan } from './plan';

export interface ForgetterDeps {
  conversations: Pick<ConversationBrowser, 'describe' | 'deleteTurn' | 'deleteConversation'>;
  derived: DerivedKnowledgeStore;
  turnLog: Pick<TurnLog, 'deleteTurns'>;
  toolLog: Pick<ToolInvocationLog, 'deleteCalls'>;
  working: Pick<WorkingMemoryStore, 'removeTurns' | 'clearSession'>;
  profiles: Pick<PgProfileStore, 'forget'>;
  audit: AuditLogger;
  /** After a delete: the user's embeddings this process holds for recall are read again (the deleted ones gone). */
  afterDelete?: (userId: string) => Promise<void>;
}

export interface DeleteRequest extends DeletionTarget, Partial<ForgetOptions> {
  dryRun?: boolean;
  /** The audit operation: `delete_turn` / `delete_conversation` by default, `retention_delete` for the retention rule. */
  operation?: string;
}

export interface DeleteResult {
  dryRun: boolean;
  channel: string;
  /** Turns deleted, or that a dry run would delete. */
  turns: number;
  plan: ForgetPlan;
}

/**
 * Deletes a turn or a conversation and what was learned only from it, in this order: the
 * derived knowledge (Neo4j, one transaction; it follows the turns' DERIVED_FROM links, so it
 * goes first), the turns, the turn log's rows and tool calls, working memory, the profile's
 * values of the facts that went, the vectors held in the process; then one audit record of
 * kinds and counts, written before the delete answers. A delete interrupted midway is completed by asking again. A dry run
 * reads the same plan and changes nothing.
 */
export class Forgetter {
  constructor(private readonly d: ForgetterDeps) {}

  /** null when the user has no such conversation (or turn). */
  async delete(scope: AccessScope, r: DeleteRequest): Promise<DeleteResult | null> {
    const found = await this.d.conversations.describe(scope, r.conversationId, r.index);
    if (!found) return null;
    const opts: ForgetOptions = { keepDerived: r.keepDerived ?? false, keepConfirmed: r.keepConfirmed ?? false };
    const target: DeletionTarget = { conversationId: r.conversationId, index: r.index };
    if (r.dryRun) {
      const preview = await this.d.derived.plan(scope, target, opts);
      const profile = await this.d.profiles.forget(scope.userId, preview.forgottenClaims, preview.restoredClaims, true);
      return { dryRun: true, channel: found.channel, turns: found.turns, plan: withProfile(preview, profile) };
    }

    const t0 = performance.now();
    const outcome = await this.d.derived.forget(scope, target, opts);
    const whole = r.index === undefined;
    const turns = whole ? await this.d.conversations.deleteConversation(scope, r.conversationId) : await this.d.conversations.deleteTurn(scope, r.conversationId, r.index!);
    const session = sessionScope({ ...scope, channel: found.channel }, r.conversationId);
    const [, , , profile] = await Promise.all([
      this.d.turnLog.deleteTurns(scope.userId, r.conversationId, r.index),
      this.d.toolLog.deleteCalls(scope.userId, r.conversationId, r.index),
      whole ? this.d.working.clearSession(session) : this.d.working.removeTurns(session, [r.index!]),
      this.d.profiles.forget(scope.userId, outcome.forgottenClaims, outcome.restoredClaims),
    ]);
    await this.d.afterDelete?.(scope.userId);
    const plan = withProfile(outcome, profile);
    this.d.audit.logWrite({
      operation: r.operation ?? (whole ? 'delete_conversation' : 'delete_turn'),
      memoryType: 'episodic',
      userId: scope.userId,
      channel: found.channel,
      conversationId: r.conversationId,
      affectedIds: [whole ? r.conversationId : `${r.conversationId}:${r.index}`],
      latencyMs: performance.now() - t0,
      metadata: { turns, keepDerived: opts.keepDerived, derived: plan.counts },
    });
    // The record is written before the delete answers: a process stopped right after it must not lose it.
    await this.d.audit.flush();
    return { dryRun: false, channel: found.channel, turns, plan };
  }
}

/** The plan with the profile's entries that go (or come back) listed as items. */
function withProfile(plan: ForgetPlan, changes: { removed: ProfileEntry[]; added: ProfileEntry[] }): ForgetPlan {
  const item = (e: ProfileEntry, action: 'delete' | 'restore'): DerivedItem => ({
    kind: 'profile',
    id: e.key,
    label: `${e.key.replace(/_/g, ' ')}: ${e.value}`,
    action,
    why: action === 'delete' ? 'the facts that put it in the profile go' : 'a fact made current again puts it back',
  });
  return toPlan([...plan.items.filter((i) => i.kind !== 'profile'), ...changes.removed.map((e) => item(e, 'delete')), ...changes.added.map((e) => item(e, 'restore'))]);
}
