import type { AuditLogger } from '../audit';
import { LOCAL_PRINCIPAL, principalScope, type AccessPrincipal, type AccessScope } from '../access';
import type { ConversationBrowser, ConversationInfo, Turn, TurnLog } from '../episodic/contract';
import { NotFoundError, ValidationError } from '../errors';
import { parseInput } from '../schemas';
import type { ProceduralStore, Strategy } from '../procedural/contract';
import type { Entity, Fact, KnowledgeCuration, MergeEntitiesResult } from '../semantic/contract';
import { sessionScope, type WorkingMemoryStore } from '../working/contract';
import {
  ConversationListQuerySchema,
  DeleteConversationSchema,
  DeleteTurnSchema,
  EntityListQuerySchema,
  FactPageQuerySchema,
  MergeEntitiesSchema,
  RestoreFactSchema,
  StrategyListQuerySchema,
  TurnPageQuerySchema,
  type ConversationListQuery,
  type DeleteConversationInput,
  type DeleteTurnInput,
  type DeletionReport,
  type EntityListQuery,
  type FactPageQuery,
  type MergeEntitiesInput,
  type RestoreFactInput,
  type StrategyListQuery,
  type TurnPageQuery,
} from './schema';

export interface MemoryBrowserDeps {
  conversations: ConversationBrowser;
  turnLog: TurnLog;
  working: WorkingMemoryStore;
  knowledge: KnowledgeCuration;
  strategies: Pick<ProceduralStore, 'listStrategies'>;
  audit: AuditLogger;
}

/**
 * Browsing and curating one user's memory, as a person does it from the studio: listings
 * page by page (conversations, turns, entities, facts), and the edits (restore a fact, merge
 * two entities, delete a turn or a conversation for real). Validates first, builds the call's
 * `AccessScope` from the principal it acts for, calls the owning stores, and audits every edit
 * (the actor is whoever the principal is). A deletion can be asked as a dry run first: the
 * same report, nothing changed.
 */
export class MemoryBrowser {
  constructor(
    private readonly d: MemoryBrowserDeps,
    private readonly principal: AccessPrincipal = LOCAL_PRINCIPAL,
  ) {}

  private scope(userId: string, channel?: string): AccessScope {
    return principalScope(this.principal, userId, channel ? { channel } : {});
  }

  /** The user's conversations, latest activity first. */
  async listConversations(query: ConversationListQuery): Promise<{ conversations: ConversationInfo[]; nextCursor: string | null }> {
    const q = parseInput(ConversationListQuerySchema, query, 'conversation listing');
    return this.d.conversations.listConversations(this.scope(q.userId), { channel: q.channel, cursor: q.cursor, limit: q.limit });
  }

  /** A page of a conversation's turns in order; NotFoundError when it is not the user's. */
  async listTurns(query: TurnPageQuery): Promise<{ turns: Turn[]; total: number; nextAfterIndex: number | null }> {
    const q = parseInput(TurnPageQuerySchema, query, 'turn page');
    const scope = this.scope(q.userId);
    const t0 = performance.now();
    const page = await this.d.conversations.turnsPage(scope, q.conversationId, { afterIndex: q.afterIndex, limit: q.limit });
    if (!page) throw new NotFoundError('conversation', q.conversationId);
    this.d.audit.logRead({
      operation: 'listTurns',
      memoryType: 'episodic',
      userId: q.userId,
      channel: scope.channel,
      query: `conversation:${q.conversationId} after ${q.afterIndex}`,
      channelsSearched: [],
      resultCount: page.turns.length,
      latencyMs: performance.now() - t0,
    });
    const last = page.turns.at(-1);
    return { ...page, nextAfterIndex: page.turns.length === q.limit && last ? last.index : null };
  }

  /** A page of the user's entities (live ones unless `includeDeleted`). */
  async listEntities(query: EntityListQuery): Promise<{ entities: Entity[]; nextCursor: string | null }> {
    const { userId, cursor, ...q } = parseInput(EntityListQuerySchema, query, 'entity listing');
    const offset = offsetOf(cursor);
    const entities = await this.d.knowledge.listEntities(this.scope(userId), { ...q, offset });
    return { entities, nextCursor: entities.length === q.limit ? String(offset + q.limit) : null };
  }

  /** A page of the user's facts: current (active), past (superseded, retracted) or all. */
  async listFacts(query: FactPageQuery): Promise<{ facts: Fact[]; nextCursor: string | null }> {
    const { userId, cursor, ...q } = parseInput(FactPageQuerySchema, query, 'fact listing');
    const offset = offsetOf(cursor);
    const facts = await this.d.knowledge.listFacts(this.scope(userId), { ...q, offset });
    return { facts, nextCursor: facts.length === q.limit ? String(offset + q.limit) : null };
  }

  /** A page of the user's strategies (procedural memory), filtered by channel, text, tool and success rate. */
  async listStrategies(query: StrategyListQuery): Promise<{ strategies: Strategy[]; nextCursor: string | null }> {
    const { userId, cursor, ...q } = parseInput(StrategyListQuerySchema, query, 'strategy listing');
    const offset = offsetOf(cursor);
    const strategies = await this.d.strategies.listStrategies(this.scope(userId), { ...q, offset });
    return { strategies, nextCursor: strategies.length === q.limit ? String(offset + q.limit) : null };
  }

  /**
   * A user's export (the whole-user store's lines, as `mnemograph export` writes them) as JSON
   * lines, audited as `export_user` once the last line went out: recorded like a write, whatever
   * AUDIT_LEVEL says, since it hands out the user's personal data. An export that stops midway
   * (the client went away, a store failed) is not recorded as complete: its row says
   * `completed: false` with the lines sent.
   */
  async *exportLines(userId: string, lines: AsyncIterable<unknown>, map: (line: unknown) => unknown = (l) => l): AsyncGenerator<string> {
    const t0 = performance.now();
    let sent = 0;
    let completed = false;
    try {
      for await (const line of lines) {
        yield `${JSON.stringify(map(line))}\n`;
        sent++;
      }
      completed = true;
    } finally {
      this.d.audit.logWrite({ operation: 'export_user', memoryType: 'system', userId, channel: '', affectedIds: [], latencyMs: performance.now() - t0, metadata: { lines: sent, completed } });
    }
  }

  /** Makes a retracted fact active again; audited as `restore_fact`. */
  async restoreFact(input: RestoreFactInput): Promise<Fact> {
    const q = parseInput(RestoreFactSchema, input, 'fact restore');
    const t0 = performance.now();
    const fact = await this.d.knowledge.restoreFact(this.scope(q.userId), q.factId);
    this.write('restore_fact', 'semantic', q.userId, fact.channel, [fact.id], t0, undefined, { reason: q.reason });
    return fact;
  }

  /** Folds one entity into another; audited as `merge_entities` (both ids). */
  async mergeEntities(input: MergeEntitiesInput): Promise<MergeEntitiesResult> {
    const q = parseInput(MergeEntitiesSchema, input, 'entity merge');
    const t0 = performance.now();
    const result = await this.d.knowledge.mergeEntities(this.scope(q.userId), q.keepId, q.mergeId);
    this.write('merge_entities', 'semantic', q.userId, result.entity.channel, [q.keepId, q.mergeId], t0, undefined, { moved: result.moved, mergedName: result.merged.name });
    return result;
  }

  /**
   * Deletes one turn from Neo4j (its neighbours are relinked) and the Postgres turn log; facts
   * learned from it stay, without the link. With `dryRun`, only the report. NotFoundError
   * when the user has no such turn.
   */
  async deleteTurn(input: DeleteTurnInput): Promise<DeletionReport> {
    const q = parseInput(DeleteTurnSchema, input, 'turn deletion');
    const scope = this.scope(q.userId);
    const found = await this.d.conversations.describe(scope, q.conversationId, q.index);
    if (!found) throw new NotFoundError('turn', `${q.conversationId}:${q.index}`);
    const derivedFacts = await this.d.knowledge.derivedFactCount(scope, q.conversationId, q.index);
    const report = (dryRun: boolean, turns: number): DeletionReport => ({
      dryRun,
      turns,
      conversation: false,
      workingMemory: false,
      derivedFacts,
      summary: `${dryRun ? 'Would delete' : 'Deleted'} turn ${q.index} of the conversation${factsNote(derivedFacts, 'it')}.`,
    });
    if (q.dryRun) return report(true, found.turns);
    const t0 = performance.now();
    const turns = await this.d.conversations.deleteTurn(scope, q.conversationId, q.index);
    // The session's recent turns in Redis too, so the turn does not come back from working memory.
    await Promise.all([this.d.turnLog.deleteTurns(q.userId, q.conversationId, q.index), this.d.working.removeTurns(sessionScope(this.scope(q.userId, found.channel), q.conversationId), [q.index])]);
    this.write('delete_turn', 'episodic', q.userId, found.channel, [`${q.conversationId}:${q.index}`], t0, q.conversationId, { derivedFacts });
    return report(false, turns);
  }

  /**
   * Deletes a conversation for real: its turns and node (Neo4j, in batches), its turn-log rows
   * and its session's working memory. With `dryRun`, only the report. NotFoundError when the
   * user has no such conversation.
   */
  async deleteConversation(input: DeleteConversationInput): Promise<DeletionReport> {
    const q = parseInput(DeleteConversationSchema, input, 'conversation deletion');
    const scope = this.scope(q.userId);
    const found = await this.d.conversations.describe(scope, q.conversationId);
    if (!found) throw new NotFoundError('conversation', q.conversationId);
    const derivedFacts = await this.d.knowledge.derivedFactCount(scope, q.conversationId);
    const report = (dryRun: boolean, turns: number): DeletionReport => ({
      dryRun,
      turns,
      conversation: true,
      workingMemory: true,
      derivedFacts,
      summary: `${dryRun ? 'Would delete' : 'Deleted'} the conversation (channel ${found.channel}): ${turns} turn${turns === 1 ? '' : 's'} and its working memory${factsNote(derivedFacts, 'them')}.`,
    });
    if (q.dryRun) return report(true, found.turns);
    const t0 = performance.now();
    const turns = await this.d.conversations.deleteConversation(scope, q.conversationId);
    await Promise.all([this.d.turnLog.deleteTurns(q.userId, q.conversationId), this.d.working.clearSession(sessionScope(this.scope(q.userId, found.channel), q.conversationId))]);
    this.write('delete_conversation', 'episodic', q.userId, found.channel, [q.conversationId], t0, q.conversationId, { turns, derivedFacts });
    return report(false, turns);
  }

  private write(
    operation: string,
    memoryType: 'episodic' | 'semantic',
    userId: string,
    channel: string,
    affectedIds: string[],
    t0: number,
    conversationId?: string,
    metadata?: Record<string, unknown>,
  ): void {
    this.d.audit.logWrite({ operation, memoryType, userId, channel, conversationId, affectedIds, latencyMs: performance.now() - t0, metadata });
  }
}

/** What stays behind: facts learned from the deleted turns. */
function factsNote(n: number, what: string): string {
  return n === 0 ? '' : `; ${n} fact${n === 1 ? '' : 's'} learned from ${what} stay${n === 1 ? 's' : ''}, without the link to ${what}`;
}

/**
 * An export line with the tenant's ids: every id-named field (`id`, `*_id`, `*Id`, `*_ids`, `*Ids`,
 * and a node reference's `value`) loses the tenant's prefix, as every answer of the API does. Content
 * and other text are left as stored.
 */
export function externalExportLine(line: unknown, prefix: string): unknown {
  const strip = (v: unknown): unknown => (typeof v === 'string' && v.startsWith(prefix) ? v.slice(prefix.length) : Array.isArray(v) ? v.map(strip) : v);
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, ID_KEY.test(k) ? strip(x) : walk(x)]));
  };
  return walk(line);
}
const ID_KEY = /^(id|ids|value|userId)$|_ids?$|Ids?$/;

/** A listing's offset cursor: a non-negative integer as text. */
function offsetOf(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  if (!/^\d{1,9}$/.test(cursor))
    throw new ValidationError('invalid cursor: pass the nextCursor of the previous page unchanged', { issues: [{ path: 'cursor', message: 'not a cursor of this listing' }] });
  return Number(cursor);
}
