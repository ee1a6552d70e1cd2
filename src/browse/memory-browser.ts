import type { AuditLogger } from '../audit';
import { LOCAL_PRINCIPAL, principalScope, type AccessPrincipal, type AccessScope } from '../access';
import type { ConversationBrowser, ConversationInfo, Turn } from '../episodic/contract';
import type { DerivedAction, DerivedKind } from '../forgetting/contract';
import type { DeleteResult, Forgetter } from '../forgetting/forgetter';
import { NotFoundError, ValidationError } from '../errors';
import { parseInput } from '../schemas';
import type { ProceduralStore, Strategy } from '../procedural/contract';
import type { Entity, Fact, KnowledgeCuration, MergeEntitiesResult } from '../semantic/contract';
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
  knowledge: KnowledgeCuration;
  forgetter: Forgetter;
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
   * Deletes one turn (its neighbours are relinked) and what was learned only from it
   * (src/forgetting); with `keepDerived` what was learned stays. With `dryRun`, only the
   * report. NotFoundError when the user has no such turn.
   */
  async deleteTurn(input: DeleteTurnInput): Promise<DeletionReport> {
    const q = parseInput(DeleteTurnSchema, input, 'turn deletion');
    const r = await this.d.forgetter.delete(this.scope(q.userId), q);
    if (!r) throw new NotFoundError('turn', `${q.conversationId}:${q.index}`);
    return deletionReport(r, { keepDerived: q.keepDerived, whole: false, what: `turn ${q.index} of the conversation` });
  }

  /**
   * Deletes a conversation for real: its turns and node (Neo4j, in batches), its turn-log and
   * tool-call rows, its session's working memory, and what was learned only from it. With
   * `dryRun`, only the report. NotFoundError when the user has no such conversation.
   */
  async deleteConversation(input: DeleteConversationInput): Promise<DeletionReport> {
    const q = parseInput(DeleteConversationSchema, input, 'conversation deletion');
    const r = await this.d.forgetter.delete(this.scope(q.userId), q);
    if (!r) throw new NotFoundError('conversation', q.conversationId);
    return deletionReport(r, { keepDerived: q.keepDerived, whole: true, what: `the conversation (channel ${r.channel}): ${r.turns} turn${r.turns === 1 ? '' : 's'} and its working memory` });
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

/** The API's report of a deletion: the plan's items and counts, and one sentence. */
function deletionReport(r: DeleteResult, o: { keepDerived: boolean; whole: boolean; what: string }): DeletionReport {
  const { counts, items } = r.plan;
  const n = (k: DerivedKind, a: DerivedAction) => counts[k][a];
  const goes = (['fact', 'entity', 'relationship', 'strategy', 'poolEntry', 'profile'] as const).map((k) => [n(k, 'delete'), NOUNS[k]] as const).filter(([c]) => c > 0);
  const stays = n('fact', 'keep');
  const parts = [
    goes.length > 0 && `learned only from ${o.whole ? 'them' : 'it'}: ${goes.map(([c, [one, many]]) => `${c} ${c === 1 ? one : many}`).join(', ')} ${r.dryRun ? 'would go' : 'went'}`,
    stays > 0 && `${stays} fact${stays === 1 ? '' : 's'} with another source (or kept as asked) stay${stays === 1 ? 's' : ''}`,
    n('fact', 'restore') > 0 && `${n('fact', 'restore')} fact${n('fact', 'restore') === 1 ? '' : 's'} they had replaced ${r.dryRun ? 'would be' : 'are'} current again`,
  ].filter((x): x is string => typeof x === 'string');
  return {
    dryRun: r.dryRun,
    turns: r.turns,
    conversation: o.whole,
    workingMemory: o.whole,
    keepDerived: o.keepDerived,
    derivedFacts: n('fact', 'delete') + n('fact', 'keep'),
    counts,
    items,
    summary: `${r.dryRun ? 'Would delete' : 'Deleted'} ${o.what}${parts.length > 0 ? `; ${parts.join('; ')}` : ''}.`,
  };
}
const NOUNS = {
  fact: ['fact', 'facts'],
  entity: ['entity', 'entities'],
  relationship: ['relationship', 'relationships'],
  strategy: ['strategy', 'strategies'],
  poolEntry: ['shared pool entry', 'shared pool entries'],
  profile: ['profile entry', 'profile entries'],
} as const;

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
