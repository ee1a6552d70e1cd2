import { returnedIds } from '../audit/returned-ids';
import type { AuditLogger } from '../audit';
import type { Embedder } from '../embedding';
import type { Logger } from '../infra/logger';
import { LOCAL_PRINCIPAL, principalScope, type AccessPrincipal, type AccessScope, type ScopeOptions } from '../access';
import { parseInput } from '../schemas';
import {
  CERTAINTY_CONFIDENCE,
  CorrectFactInputSchema,
  DEFAULT_PROMOTION_THRESHOLDS,
  EndRelationshipSchema,
  EntityGraphQuerySchema,
  EntityInputSchema,
  EntityRefSchema,
  EntitySearchSchema,
  FactInputSchema,
  FactListSchema,
  FactRefSchema,
  FactSearchSchema,
  FindEntitiesSchema,
  PromoteInputSchema,
  RecordAccessSchema,
  RelationshipInputSchema,
  RetractFactSchema,
  TimelineQuerySchema,
  type CorrectFactInput,
  type CreateRelationshipResult,
  type EndRelationshipInput,
  type Entity,
  type EntityGraph,
  type EntityGraphQuery,
  type EntityInput,
  type EntitySearch,
  type Fact,
  type FactInput,
  type FactList,
  type FactSearch,
  type FindEntitiesQuery,
  type PromoteInput,
  type PromotionResult,
  type PromotionThresholds,
  type RecordAccessInput,
  type Relationship,
  type RelationshipInput,
  type ScoredEntity,
  type ScoredFact,
  type SemanticStore,
  type StoreFactResult,
  type TimelineEntry,
  type TimelineQuery,
  type UpsertEntityResult,
} from './contract';
import { embeddingForQuery, embeddingForWrite } from './embed';

/** Cosine similarity above which a same-type entity with no name in common is merged. */
export const DEFAULT_ENTITY_MATCH_SIMILARITY = 0.92;

export interface SemanticMemoryDeps {
  store: SemanticStore;
  embedder: Embedder;
  audit: AuditLogger;
  log: Logger;
  promotionThresholds?: PromotionThresholds;
  entityMatchSimilarity?: number;
  /**
   * A retraction or correction re-evaluates the profile built from the facts: the retracted
   * (or corrected) values leave it, a correction's new value enters it (PgProfileStore.forget).
   */
  reviseProfile?: (userId: string, gone: Fact[], added: Fact[]) => Promise<void>;
}

/**
 * The semantic part of the facade: validates (bad input -> ValidationError before any
 * write), embeds, calls the store, and writes the audit log. Each call builds its
 * `AccessScope` once, from the validated input and the principal it acts for (see `as`),
 * and passes it to every store call. Reads cover the given channels plus `_global`.
 */
export class SemanticMemory {
  private readonly thresholds: PromotionThresholds;
  private readonly matchSimilarity: number;

  constructor(
    private readonly d: SemanticMemoryDeps,
    private readonly principal: AccessPrincipal = LOCAL_PRINCIPAL,
  ) {
    this.thresholds = d.promotionThresholds ?? DEFAULT_PROMOTION_THRESHOLDS;
    this.matchSimilarity = d.entityMatchSimilarity ?? DEFAULT_ENTITY_MATCH_SIMILARITY;
  }

  /** The same semantic memory acting for `principal` (its tenant and agent land in every scope). */
  as(principal: AccessPrincipal): SemanticMemory {
    return new SemanticMemory(this.d, principal);
  }

  private scope(userId: string, opts?: Omit<ScopeOptions, 'tenantId' | 'agentId'>): AccessScope {
    return principalScope(this.principal, userId, opts);
  }

  async upsertEntity(input: EntityInput): Promise<UpsertEntityResult> {
    const { userId, channel, ...e } = parseInput(EntityInputSchema, input, 'entity');
    const scope = this.scope(userId, { channel });
    const text = [e.name, ...e.aliases].join(', ') + (e.description ? `: ${e.description}` : '');
    const embedding = await embeddingForWrite(this.d.embedder, this.d.log, 'semantic', text, e.embedding);
    const t0 = performance.now();
    const result = await this.d.store.upsertEntity(scope, { ...e, embedding }, { embeddingThreshold: this.matchSimilarity });
    this.write(result.created ? 'create_entity' : 'merge_entity', userId, channel, [result.entity.id], t0, { name: e.name, aliases: e.aliases, matchedBy: result.matchedBy });
    return result;
  }

  async getEntity(userId: string, entityId: string): Promise<Entity | null> {
    const q = parseInput(EntityRefSchema, { userId, entityId }, 'entity query');
    return this.d.store.getEntity(this.scope(q.userId), q.entityId);
  }

  async findEntitiesByName(query: FindEntitiesQuery): Promise<Entity[]> {
    const q = parseInput(FindEntitiesSchema, query, 'entity name query');
    const scope = this.scope(q.userId, { channels: q.channels });
    return this.read('findEntitiesByName', scope, q.name, () => this.d.store.findEntitiesByName(scope, q.name));
  }

  async deleteEntity(userId: string, entityId: string): Promise<Entity> {
    const q = parseInput(EntityRefSchema, { userId, entityId }, 'entity delete');
    const t0 = performance.now();
    const entity = await this.d.store.deleteEntity(this.scope(q.userId), q.entityId);
    this.write('delete_entity', q.userId, entity.channel, [entity.id], t0);
    return entity;
  }

  storeFact(input: FactInput): Promise<StoreFactResult> {
    return this.writeFact(input, false);
  }

  learnFact(input: FactInput): Promise<StoreFactResult> {
    return this.writeFact(input, true);
  }

  private async writeFact(input: FactInput, learn: boolean): Promise<StoreFactResult> {
    const { userId, channel, ...f } = parseInput(FactInputSchema, input, 'fact');
    const scope = this.scope(userId, { channel });
    const embedding = await embeddingForWrite(this.d.embedder, this.d.log, 'semantic', f.claim, f.embedding);
    const t0 = performance.now();
    const fact = {
      ...f,
      confidence: f.confidence ?? (f.certainty ? CERTAINTY_CONFIDENCE[f.certainty] : CERTAINTY_CONFIDENCE.explicit),
      sourceTurnIds: [...new Set([...(f.sourceTurnId ? [f.sourceTurnId] : []), ...(f.sourceTurnIds ?? [])])],
      validFrom: f.validFrom ?? new Date().toISOString(),
      embedding,
    };
    const result = learn ? await this.d.store.learnFact(scope, fact) : await this.d.store.storeFact(scope, fact);
    if (result.created || result.reinforced) {
      const op = result.reinforced ? 'reinforce_fact' : 'store_fact';
      this.write(op, userId, channel, [result.fact.id, ...result.superseded], t0, { claim: f.claim, source: f.source, superseded: result.superseded });
    }
    return result;
  }

  async getFact(userId: string, factId: string): Promise<Fact | null> {
    const q = parseInput(FactRefSchema, { userId, factId }, 'fact query');
    return this.d.store.getFact(this.scope(q.userId), q.factId);
  }

  async findFacts(query: FactList): Promise<Fact[]> {
    const { userId, channels, activeConnections, ...q } = parseInput(FactListSchema, query, 'fact list');
    const scope = this.scope(userId, { channels, connections: activeConnections });
    return this.read('findFacts', scope, q.entityId ? `entity:${q.entityId}` : '', () => this.d.store.findFacts(scope, q));
  }

  async correctFact(input: CorrectFactInput): Promise<{ oldFact: Fact; newFact: Fact }> {
    const c = parseInput(CorrectFactInputSchema, input, 'fact correction');
    const embedding = await embeddingForWrite(this.d.embedder, this.d.log, 'semantic', c.claim, c.embedding);
    const t0 = performance.now();
    const result = await this.d.store.correctFact(this.scope(c.userId), c.factId, {
      claim: c.claim,
      confidence: c.confidence ?? CERTAINTY_CONFIDENCE.explicit,
      source: c.source,
      sourceTurnIds: c.sourceTurnId ? [c.sourceTurnId] : [],
      needsReview: false,
      reason: c.reason,
      embedding,
    });
    this.write('correct_fact', c.userId, result.newFact.channel, [result.newFact.id, result.oldFact.id], t0, { claim: c.claim, reason: c.reason });
    await this.d.reviseProfile?.(c.userId, [result.oldFact], [result.newFact]);
    return result;
  }

  async confirmFact(userId: string, factId: string): Promise<Fact> {
    const q = parseInput(FactRefSchema, { userId, factId }, 'fact confirmation');
    const t0 = performance.now();
    const fact = await this.d.store.confirmFact(this.scope(q.userId), q.factId);
    this.write('confirm_fact', q.userId, fact.channel, [fact.id], t0);
    return fact;
  }

  async retractFact(userId: string, factId: string, reason?: string): Promise<Fact> {
    const q = parseInput(RetractFactSchema, { userId, factId, reason }, 'fact retraction');
    const t0 = performance.now();
    const fact = await this.d.store.retractFact(this.scope(q.userId), q.factId, q.reason);
    this.write('retract_fact', q.userId, fact.channel, [fact.id], t0, { reason: q.reason });
    await this.d.reviseProfile?.(q.userId, [fact], []);
    return fact;
  }

  async createRelationship(input: RelationshipInput): Promise<CreateRelationshipResult> {
    const { userId, channel, ...r } = parseInput(RelationshipInputSchema, input, 'relationship');
    const t0 = performance.now();
    const result = await this.d.store.createRelationship(this.scope(userId, { channel }), { ...r, validFrom: r.validFrom ?? new Date().toISOString() });
    if (result.created || result.closed.length > 0) {
      this.write('create_relationship', userId, channel, [result.relationship.id, ...result.closed], t0, { type: r.type, sourceId: r.sourceId, targetId: r.targetId });
    }
    return result;
  }

  async endRelationship(input: EndRelationshipInput): Promise<Relationship[]> {
    const r = parseInput(EndRelationshipSchema, input, 'relationship end');
    const t0 = performance.now();
    const closed = await this.d.store.endRelationship(this.scope(r.userId), r.sourceId, r.type, r.targetId);
    if (closed.length > 0)
      this.write(
        'end_relationship',
        r.userId,
        closed[0]!.channel,
        closed.map((c) => c.id),
        t0,
        { type: r.type },
      );
    return closed;
  }

  async getEntityGraph(query: EntityGraphQuery): Promise<EntityGraph> {
    const q = parseInput(EntityGraphQuerySchema, query, 'entity graph query');
    const scope = this.scope(q.userId, { channels: q.channels, connections: q.activeConnections });
    const t0 = performance.now();
    const graph = await this.d.store.getEntityGraph(scope, q.entityIds, q.depth, q.limit);
    this.logRead('getEntityGraph', scope, `entities:${q.entityIds.join(',')} depth ${q.depth}`, graph.entities, t0);
    return graph;
  }

  async getEntityTimeline(query: TimelineQuery): Promise<TimelineEntry[]> {
    const q = parseInput(TimelineQuerySchema, query, 'timeline query');
    const scope = this.scope(q.userId);
    return this.read('getEntityTimeline', scope, `entity:${q.entityId}`, () => this.d.store.getEntityTimeline(scope, q.entityId, q.limit));
  }

  async vectorSearchFacts(query: FactSearch): Promise<ScoredFact[]> {
    const q = parseInput(FactSearchSchema, query, 'fact search');
    const scope = this.scope(q.userId, { channels: q.channels, connections: q.activeConnections });
    const embedding = await embeddingForQuery(this.d.embedder, q.query, q.queryEmbedding);
    return this.read('vectorSearchFacts', scope, q.query ?? '<embedding>', () =>
      this.d.store.vectorSearchFacts(scope, embedding, { limit: q.topK, minConfidence: q.minConfidence, includeInactive: q.includeInactive }),
    );
  }

  async vectorSearchEntities(query: EntitySearch): Promise<ScoredEntity[]> {
    const q = parseInput(EntitySearchSchema, query, 'entity search');
    const scope = this.scope(q.userId, { channels: q.channels });
    const embedding = await embeddingForQuery(this.d.embedder, q.query, q.queryEmbedding);
    return this.read('vectorSearchEntities', scope, q.query ?? '<embedding>', () => this.d.store.vectorSearchEntities(scope, embedding, { limit: q.topK, types: q.types }));
  }

  /** Keyword (BM25) search over fact claims; `query` is required. */
  async searchFactsText(query: FactSearch): Promise<ScoredFact[]> {
    const q = parseInput(
      FactSearchSchema.refine((x) => x.query !== undefined, 'query is required'),
      query,
      'fact text search',
    );
    const scope = this.scope(q.userId, { channels: q.channels, connections: q.activeConnections });
    return this.read('searchFactsText', scope, q.query!, () =>
      this.d.store.fullTextSearchFacts(scope, q.query!, { limit: q.topK, minConfidence: q.minConfidence, includeInactive: q.includeInactive }),
    );
  }

  /** Keyword (BM25) search over entity names, aliases and descriptions; `query` is required. */
  async searchEntitiesText(query: EntitySearch): Promise<ScoredEntity[]> {
    const q = parseInput(
      EntitySearchSchema.refine((x) => x.query !== undefined, 'query is required'),
      query,
      'entity text search',
    );
    const scope = this.scope(q.userId, { channels: q.channels });
    return this.read('searchEntitiesText', scope, q.query!, () => this.d.store.fullTextSearchEntities(scope, q.query!, { limit: q.topK, types: q.types }));
  }

  /** Reinforcement after retrieval: access_count + 1, last_accessed = now. */
  async recordAccess(input: RecordAccessInput): Promise<number> {
    const q = parseInput(RecordAccessSchema, input, 'access record');
    return this.d.store.recordAccess(this.scope(q.userId), q);
  }

  /**
   * Promotes a project fact to `_global` past the configured (or given) thresholds, or
   * unconditionally with `force`. A promotion is audited with the measures and the
   * thresholds in force.
   */
  async promoteToGlobal(input: PromoteInput): Promise<PromotionResult> {
    const p = parseInput(PromoteInputSchema, input, 'promotion');
    const thresholds = p.thresholds ?? this.thresholds;
    const result = await this.d.store.promoteToGlobal(this.scope(p.userId), p.factId, thresholds, p.force);
    if (result.promoted && result.globalFact) {
      this.d.audit.logPromotion({
        userId: p.userId,
        factId: p.factId,
        newFactId: result.globalFact.id,
        sourceChannel: result.sourceChannel,
        reason: p.force ? `${p.reason} (forced)` : p.reason,
        confidence: result.confidence,
        accessCount: result.accessCount,
        conversationCount: result.conversationCount,
        thresholds: { ...thresholds },
      });
    }
    return result;
  }

  private write(operation: string, userId: string, channel: string, affectedIds: string[], t0: number, payload?: Record<string, unknown>): void {
    this.d.audit.logWrite({ operation, memoryType: 'semantic', userId, channel, affectedIds, latencyMs: performance.now() - t0, payload });
  }

  private logRead(operation: string, scope: AccessScope, query: string, returned: readonly unknown[], t0: number): void {
    this.d.audit.logRead({
      operation,
      memoryType: 'semantic',
      userId: scope.userId,
      channel: scope.channel,
      query,
      channelsSearched: [...scope.channels],
      resultCount: returned.length,
      affectedIds: returnedIds(returned),
      latencyMs: performance.now() - t0,
    });
  }

  private async read<T extends unknown[]>(operation: string, scope: AccessScope, query: string, run: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    const result = await run();
    this.logRead(operation, scope, query, result, t0);
    return result;
  }
}
