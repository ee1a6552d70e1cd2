import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { returnedIds } from '../audit/returned-ids';
import type { AuditLogger } from '../audit';
import { BACKGROUND_MAX_WAIT_MS, type InteractiveGate } from '../infra/interactive-gate';
import type { HoldMode } from '../infra/owner-vectors';
import { forEachSlice } from '../infra/slices';
import { ValidationError } from '../errors';
import type { Embedder } from '../embedding';
import {
  BatchSchema,
  RecentTurnsQuerySchema,
  TurnInputSchema,
  VectorSearchQuerySchema,
  type EpisodicStore,
  type ScoredTurn,
  type StoreTurnResult,
  type Turn,
  type NewTurn,
  type StoreTurnsOptions,
  type TurnInput,
  type TurnLog,
} from '../episodic';
import type { BackgroundEmbedder } from '../episodic/background-embedder';
import { embeddingText, prepareTurn } from '../episodic/prepare';
import type { Logger } from '../infra/logger';
import { LOCAL_PRINCIPAL, principalScope, type AccessPrincipal, type AccessScope, type ScopeOptions } from '../access';
import { ConnectionIdSchema, IdSchema, UserIdSchema, parseInput, windowStart } from '../schemas';
import { sessionScope, type ActiveGoal, type SessionScope, type WorkingMemoryStore } from '../working';
import { ContextKeySchema, ContextTtlSchema, SessionSchema } from '../working/schema';
import { formatContext, FormatOptionsSchema, RecallQuerySchema, type FormatOptions, type MemoryBundle, type ParsedRecallQuery, type RecallEngine, type RecallQuery } from '../retrieval';
import { SemanticMemory, type PromotionThresholds, type SemanticStore } from '../semantic';
import { ProceduralMemory, type ProceduralStore, type ToolInvocationLog } from '../procedural';
import { GoalMemory, type GoalStore } from '../goals';
import { PoolMemory, type PoolStore } from '../pools';
import type { FusionSettings } from '../retrieval/sources/hybrid';
import { ObservationInputSchema, type Observation, type ObservationCategory, type ObservationQueue } from '../observations/contract';
import type { UserProfile } from '../observations/profile';
import type { JobName } from '../worker/contract';
import { MemoryBrowser } from '../browse/memory-browser';
import type { ConversationBrowser } from '../episodic/contract';
import type { Forgetter } from '../forgetting';
import type { AgentView } from '../tenancy/user-data';
import type { Fact, KnowledgeCuration } from '../semantic/contract';
import type { JobRunResult } from '../worker/worker';
import { ShortTermMemory, type Clock, type ShortTermStore } from '../short-term';
import { recallSkipReason, SettingsUpdateSchema, type MemorySettings, type SettingsStore, type SettingsUpdate } from '../settings';
import { LearnedInfoWriteSchema, type LearnedInfo, type LearnedInfoWrite } from '../observations/schema';
import type { LearnedInfoStore } from '../observations/learned-info';
import { tierStats, type TierCounter, type TierStats } from '../tiers';
import { MnemographError, NotFoundError } from '../errors';

/** Turns a bulk import prepares or writes before it yields to interactive calls. */
const IMPORT_SLICE = 100;
/**
 * The longest a bulk import's slice waits for interactive calls under way: half the bound of
 * background loops, as a caller waits for the import's answer.
 */
const IMPORT_YIELD_MS = BACKGROUND_MAX_WAIT_MS / 2;
/**
 * How often warm-up's rehearsals run each statement: Neo4j plans a statement with interpreted
 * expressions and, on its tenth run from the plan cache, plans it again with compiled ones
 * (`internal.cypher.expression_recompilation_limit`, 10 in 5.26), so a rehearsal that ran it
 * nine times left that second planning (30-135 ms a statement) to a caller's first request.
 */
export const REHEARSAL_RUNS = 11;
/**
 * How long the recall rehearsal goes on after its REHEARSAL_RUNS rounds: a just-started Neo4j
 * JIT-compiles its runtime for minutes (after a Neo4j restart the first real recall took 209 ms,
 * every stage slow, the third 66 ms), and more rounds give the hot code its compilation now.
 */
export const RECALL_REHEARSAL_MS = 2_000;

export interface AgentMemoryDeps {
  episodic: EpisodicStore;
  turnLog: TurnLog;
  working: WorkingMemoryStore;
  embedder: Embedder;
  backgroundEmbedder: BackgroundEmbedder;
  audit: AuditLogger;
  log: Logger;
  embeddingMode: 'inline' | 'deferred';
  /** Held while remember() and storeTurn() run, so background loops yield to them (infra/interactive-gate). */
  gate?: InteractiveGate;
  /** The read path behind remember(). */
  recall: RecallEngine;
  /** Knowledge stores (semantic, procedural, goals) and their settings. */
  semantic: SemanticStore;
  procedural: ProceduralStore;
  toolLog: ToolInvocationLog;
  goals: GoalStore;
  promotionThresholds?: PromotionThresholds;
  entityMatchSimilarity?: number;
  /** Shared memory pools (src/pools) and how their search fuses its lists (the recall settings'). */
  pools?: PoolStore;
  poolFusion?: FusionSettings;
  /** The durable observation queue (src/observations) and the profile reader. */
  observations?: ObservationQueue;
  profiles?: { get(userId: string): Promise<UserProfile>; revise?(userId: string, gone: Fact[], added: Fact[]): Promise<void> };
  /** Runs a worker job now (src/worker); the composition root binds it. */
  runJob?: (name: JobName, opts?: { userIds?: string[] }) => Promise<JobRunResult>;
  /** The short-term tier (src/short-term) and the clock its TTLs are read against. */
  shortTerm?: ShortTermStore;
  clock?: Clock;
  /** Per-user memory settings (src/settings): recall honours them. */
  settings?: SettingsStore;
  /** Connection-scoped learned info (src/observations/learned-info.ts). */
  learnedInfo?: LearnedInfoStore;
  /** One counter per memory tier (src/tiers); the shared tier's is added by the pools module. */
  tierCounters?: TierCounter[];
  /**
   * Whether a user holds any node in Neo4j, the deletion of all of them (the user graph's,
   * nothing else), and how the stores hold the user's embeddings in the process (only scanned
   * in Neo4j, held now, or forgotten: src/infra/owner-vectors.ts): warm-up's rehearsal of recall.
   */
  rehearsalGraph?: { holds(userId: string): Promise<boolean>; erase(userId: string): Promise<void>; holdVectors?(userId: string, mode: HoldMode): Promise<void> };
  /** Browsing and curation (src/browse): the episodic and semantic stores' listing and deletion operations. */
  conversations?: ConversationBrowser;
  curation?: KnowledgeCuration;
  /** Deletes of turns and conversations with what was learned from them (src/forgetting). */
  forgetter?: Forgetter;
}

/**
 * The front door of the library. Validates every input, builds the call's `AccessScope`
 * once (user and channels from the input, tenant and agent from the principal it acts for)
 * and passes it to every store, and coordinates the stores; it sees interfaces only (see
 * `container.ts`).
 */
export class AgentMemory {
  constructor(
    private readonly d: AgentMemoryDeps,
    /** Who acts: `LOCAL_PRINCIPAL` for library callers; the API key's principal behind `as`. */
    readonly principal: AccessPrincipal = LOCAL_PRINCIPAL,
  ) {}

  /**
   * This memory acting for `principal`: the same stores and settings, with the principal's
   * tenant and agent in every scope it builds. The HTTP API and MCP take one per request
   * from the API key; ids are still namespaced by the caller (TenantNamespace). No I/O.
   */
  as(principal: AccessPrincipal): AgentMemory {
    return new AgentMemory(this.d, principal);
  }

  private scope(userId: string, opts?: Omit<ScopeOptions, 'tenantId' | 'agentId'>): AccessScope {
    return principalScope(this.principal, userId, opts);
  }

  /**
   * Stores one conversation turn: Neo4j graph (Conversation, Turn, HAS_TURN, FOLLOWED_BY),
   * the Postgres turn log, and working memory. Idempotent on (conversationId, index).
   * Resolves once Neo4j and Postgres hold the turn; embedding is inline or deferred by config.
   * Invalid input throws ValidationError before anything is written.
   */
  async storeTurn(input: TurnInput): Promise<StoreTurnResult> {
    return this.d.gate ? this.d.gate.run(() => this.storeOne(input)) : this.storeOne(input);
  }

  private async storeOne(input: TurnInput): Promise<StoreTurnResult> {
    const [result] = await this.store([prepareTurn(parseInput(TurnInputSchema, input, 'turn'))], 'store');
    return result!;
  }

  /**
   * Batched import of many turns (any conversations of any users); same guarantees as storeTurn
   * (one transaction: all stored or none). Bulk work: between slices of `IMPORT_SLICE` turns it
   * gives the event loop a turn and lets interactive calls under way finish first (bounded), so
   * an import does not stall remember() and storeTurn() of other callers.
   */
  async storeTurns(inputs: TurnInput[]): Promise<StoreTurnResult[]> {
    const parsed = parseInput(BatchSchema, inputs, 'turn batch');
    const turns: NewTurn[] = [];
    const pause = () => this.yieldToInteractive();
    await forEachSlice(parsed, IMPORT_SLICE, pause, (slice) => turns.push(...slice.map((t) => prepareTurn(t))));
    return this.store(turns, 'import', { slice: IMPORT_SLICE, pause });
  }

  /**
   * Runs storeTurn's Neo4j statements for a made-up turn of `userId` (a user no tenant can
   * hold) in a transaction that is rolled back, REHEARSAL_RUNS times: Neo4j plans and compiles
   * them (~0.5 s on a fresh plan cache) and this process runs the write path, while nothing is
   * stored, logged in PostgreSQL or audited. The API's warm-up (src/api/warm-up.ts).
   */
  async rehearseStore(userId: string): Promise<void> {
    const turn = prepareTurn(parseInput(TurnInputSchema, { userId, conversationId: userId, role: 'user', content: 'A rehearsal of the write path; rolled back.' }, 'turn'));
    const rollBack = new RolledBack();
    for (let run = 0; run < REHEARSAL_RUNS; run++) {
      try {
        await this.d.episodic.storeTurns([turn], { beforeCommit: () => Promise.reject(rollBack) });
      } catch (err) {
        if (err === rollBack) continue;
        throw err;
      }
      throw new Error('the rehearsal of storeTurn committed');
    }
  }

  /**
   * Recall over a made-up memory of `userId` (an internal user no tenant can hold): twelve
   * turns of two speakers, two related entities, a fact about each, a strategy and a goal, written by
   * the stores (Neo4j only: no turn-log row, no audit row, no Redis key), recalled without
   * audit or reinforcement, then erased. A recall over no memory never reaches the sources,
   * the hydration or the entity expansion, so the first real recall planned them (466 ms for a
   * user with knowledge, against 36-42 ms once another user's recall had run). Neo4j caches a
   * plan per statement and per size class of each string and list parameter (0, 1, 2-10,
   * 11-100, ... characters or elements), so the made-up memory is as large as a user's head of recall
   * (over ten turns to hydrate) and `userId` should be as long as a tenant's user id (11-100
   * characters) and its lists take the common lengths (one matched entity and two; access
   * counts for 1, 2 and 11 nodes). Each question is asked REHEARSAL_RUNS times, so that Neo4j has compiled its
   * statements' expressions (on a just-started Neo4j, the first real recalls ran at 130-290 ms
   * until they had, against 50-65 ms after). Refuses, changing nothing, when the user already
   * holds anything in Neo4j. Returns what the first question recalled, per kind. The API's
   * warm-up (src/api/warm-up.ts).
   */
  async rehearseRecall(userId: string): Promise<Record<'turns' | 'facts' | 'entities' | 'strategies' | 'goals', number>> {
    const { recall, rehearsalGraph: graph } = this.d;
    const rehearse = recall.rehearse?.bind(recall);
    if (!rehearse || !graph) return { turns: 0, facts: 0, entities: 0, strategies: 0, goals: 0 };
    if (await graph.holds(userId)) throw new ValidationError(`the rehearsal's user ${userId} holds memory in Neo4j; it is left alone and recall is not rehearsed`);
    const scope = this.scope(userId, {});
    try {
      await this.writeMadeUpMemory(userId, scope);
      const ask = (query: string, channels?: string[]) => {
        const q = parseInput(RecallQuerySchema, { userId, query, channels }, 'recall query');
        return rehearse(q, this.scope(userId, { channels: q.channels }));
      };
      const round = async () => {
        const first = await ask('What did Caroline paint after the trip?');
        // As recall/context formats it: the tokenizer (also storeTurn's token count) took ~10 ms
        // on its first calls until V8 had compiled it.
        formatContext(first);
        // The size classes of two other common requests: a project's channel with _global, and
        // a long question (each Lucene query, the turns' without the speakers' names, passes 100 characters).
        await ask('What did Caroline paint after the trip?', ['project']);
        await ask(
          'What did Caroline paint after her long summer trip to Lisbon and Porto with her two oldest friends from the support group, and what did Melanie say about the colours of that sunrise over the lake by the cabin?',
        );
        // Two matched entities to expand from (one is a size class of its own).
        await ask('What did Caroline and Melanie paint?');
        return first;
      };
      // First with the user's turns, facts and entities scanned in Neo4j (a user's first
      // recalls), then with their embeddings held in the process (their later recalls rank there).
      await graph.holdVectors?.(userId, 'scan');
      const started = performance.now();
      const b = await round();
      for (let run = 1; run < REHEARSAL_RUNS || performance.now() - started < RECALL_REHEARSAL_MS; run++) await round();
      await graph.holdVectors?.(userId, 'held');
      for (let run = 0; run < REHEARSAL_RUNS; run++) await round();
      // Reinforcement's writes, off the request path but planned on their first flush (47-170 ms
      // of Neo4j's CPU each, beside the first requests).
      await recall.rehearseReinforcement?.(userId, b);
      return { turns: b.turns.length, facts: b.facts.length, entities: b.entities.length, strategies: b.strategies.length, goals: b.goals.length };
    } finally {
      await graph.holdVectors?.(userId, 'forget');
      await graph.erase(userId);
    }
  }

  /** The rehearsal's made-up memory of `userId` (rehearseRecall), written by the stores. */
  private async writeMadeUpMemory(userId: string, scope: AccessScope): Promise<void> {
    const said = (i: number) => `${i % 2 ? 'Melanie' : 'Caroline'} painted a sunrise over the lake after the trip to Lisbon, day ${i + 1}`;
    const [embedding] = await this.d.embedder.embed([said(0)], { priority: 'interactive' });
    const turns = Array.from({ length: 12 }, (_, i) =>
      prepareTurn(parseInput(TurnInputSchema, { userId, conversationId: userId, role: i % 2 ? 'assistant' : 'user', content: said(i), metadata: { speaker: i % 2 ? 'Melanie' : 'Caroline' } }, 'turn')),
    );
    const stored = await this.d.episodic.storeTurns(turns.map((t) => ({ ...t, embedding })));
    // The entities' vector is far from any question's, so that full text alone picks the
    // roots of entity expansion: one for a question naming Caroline, two for one naming both.
    // (Each its own: entity resolution would merge two entities of the same vector.)
    const apart = (i: number) => embedding!.map((_, d) => (d === i ? 1 : 0));
    const entityIds: string[] = [];
    for (const [i, name] of ['Caroline', 'Melanie'].entries()) {
      const { entity } = await this.d.semantic.upsertEntity(scope, { name, type: 'person', aliases: [], description: 'a painter', embedding: apart(i) }, { embeddingThreshold: 1 });
      entityIds.push(entity.id);
      await this.d.semantic.storeFact(scope, {
        claim: said(i),
        confidence: 0.9,
        source: 'rehearsal',
        sourceTurnIds: [stored[i]!.turn.id],
        temporal: 'current',
        validFrom: new Date().toISOString(),
        aboutEntityIds: [entity.id],
        supersedes: [],
        contradicts: [],
        needsReview: false,
        embedding,
      });
    }
    // A relationship, so that the entity expansion returns rows as it does for most users.
    await this.d.semantic.createRelationship(scope, {
      sourceId: entityIds[0]!,
      targetId: entityIds[1]!,
      type: 'FRIEND_OF',
      confidence: 0.9,
      validFrom: new Date().toISOString(),
      replaceExisting: false,
    });
    await this.d.procedural.learnStrategy(scope, {
      id: `${userId}-strategy`,
      description: 'Ask what Caroline painted',
      contextPattern: 'painting after a trip',
      toolSequence: ['recall'],
      success: true,
      embedding,
    });
    await this.d.goals.addGoal(scope, { id: `${userId}-goal`, description: 'Find what Caroline painted after the trip', priority: 5, blockedBy: [], embedding });
  }

  /** Between two slices of bulk work: the event loop's turn, then interactive calls under way finish first (at most IMPORT_YIELD_MS). */
  private async yieldToInteractive(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    await this.d.gate?.idle(IMPORT_YIELD_MS);
  }

  private async store(turns: NewTurn[], operation: string, bulk?: Required<Pick<StoreTurnsOptions, 'slice' | 'pause'>>): Promise<StoreTurnResult[]> {
    const t0 = performance.now();
    if (this.d.embeddingMode === 'inline') {
      try {
        const vectors = await this.d.embedder.embed(turns.map(embeddingText), { priority: 'interactive' });
        turns.forEach((t, i) => (t.embedding = vectors[i]));
      } catch (err) {
        // Still store the turn; the background embedder picks it up later.
        this.d.log.warn({ subsystem: 'episodic', err: (err as Error).message }, 'inline embedding failed; turn stored as pending');
      }
    }
    // The Postgres rows are written inside the Neo4j transaction, before its commit: a failure
    // there (Postgres away) commits nothing, so the caller's retry stores the turn whole.
    const results = await this.d.episodic.storeTurns(turns, {
      ...bulk,
      beforeCommit: (stored) =>
        forEachSlice(
          turns.map((t, i) => ({ ...t, id: stored[i]!.turn.id, index: stored[i]!.turn.index, created: stored[i]!.created })),
          bulk?.slice ?? turns.length,
          bulk?.pause,
          (rows) => this.d.turnLog.append(rows),
        ),
    });
    // A repeat of a turn an earlier attempt stored but never acknowledged (the process stopped,
    // or its answer was a 503 after the commit) is completed here: its row was written before
    // that commit (and a missing one by the repeat's own append), its audit row is written now.
    const repeats = results.filter((r) => !r.created);
    const unaudited = new Set(
      repeats.length === 0
        ? []
        : await this.d.audit.unrecorded(
            [...new Set(repeats.map((r) => r.turn.userId))],
            repeats.map((r) => r.turn.id),
            ['store', 'import'],
          ),
    );
    const completed = results.filter((r) => r.created || unaudited.has(r.turn.id));
    const latencyMs = performance.now() - t0;
    // Audited right after the commit, before anything else is awaited: a concurrent repeat's
    // check (which flushes the queue first) then sees this row.
    for (const group of groupBy(completed, (r) => `${r.turn.userId}\u0000${r.turn.conversationId}`)) {
      const first = group[0]!.turn;
      this.d.audit.logWrite({
        operation,
        memoryType: 'episodic',
        userId: first.userId,
        channel: first.channel,
        conversationId: first.conversationId,
        sessionId: first.metadata.sessionId,
        affectedIds: group.map((r) => r.turn.id),
        latencyMs,
        payload: { turns: group.map((r) => ({ id: r.turn.id, role: r.turn.role, content: r.turn.content })) },
      });
    }
    await Promise.all([
      // One working-memory write per session, not per turn (a batch import may hold thousands).
      ...groupBy(completed, (r) => `${r.turn.userId}\u0000${r.turn.channel}\u0000${r.turn.conversationId}`).map((group) =>
        this.d.working.addTurns(
          scopeOf(this.principal, group[0]!.turn),
          group.map(({ turn: t }) => ({ id: t.id, role: t.role, content: t.content, timestamp: t.timestamp, index: t.index })),
        ),
      ),
    ]);
    if (results.some((r) => r.created && !r.turn.embedded)) this.d.backgroundEmbedder.kick();
    return results;
  }

  /** Every turn of a conversation in order; empty when it does not exist or is another user's. */
  async getConversation(userId: string, conversationId: string): Promise<Turn[]> {
    const q = parseInput(z.object({ userId: UserIdSchema, conversationId: IdSchema }), { userId, conversationId }, 'conversation query');
    const scope = this.scope(q.userId);
    return this.audited('getConversation', scope, `conversation:${q.conversationId}`, [], () => this.d.episodic.getConversation(scope, q.conversationId));
  }

  /** Turns of the last `hours` in the given channels (plus `_global`), newest first. */
  async getRecentTurns(query: z.input<typeof RecentTurnsQuerySchema>): Promise<Turn[]> {
    const q = parseInput(RecentTurnsQuerySchema, query, 'recent turns query');
    const scope = this.scope(q.userId, { channels: q.channels });
    return this.audited('getRecentTurns', scope, `last ${q.hours} h`, [...scope.channels], () => this.d.episodic.getRecentTurns(scope, { since: hoursAgo(q.hours), limit: q.limit }));
  }

  /** Nearest turns by embedding (of `query`, or the given `queryEmbedding`). */
  async vectorSearch(query: z.input<typeof VectorSearchQuerySchema>): Promise<ScoredTurn[]> {
    const q = parseInput(VectorSearchQuerySchema, query, 'vector search');
    const embedding = q.queryEmbedding ?? (await this.d.embedder.embed([q.query!], { priority: 'interactive', input: 'query' }))[0]!;
    if (embedding.length !== this.d.embedder.dimensions) {
      throw new ValidationError(`invalid vector search: queryEmbedding must have ${this.d.embedder.dimensions} numbers, got ${embedding.length}`);
    }
    const scope = this.scope(q.userId, { channels: q.channels });
    return this.audited('vectorSearch', scope, q.query ?? '<embedding>', [...scope.channels], () =>
      this.d.episodic.similarTurns(embedding, scope, {
        since: q.timeWindowHours ? hoursAgo(q.timeWindowHours) : undefined,
        limit: q.topK,
        content: true,
      }),
    );
  }

  /**
   * Recalls what matters for `query`: turns (hybrid full-text + vector), facts, entities,
   * strategies, goals and the profile of one user, over the given channels plus `_global`,
   * narrowed by the time window and metadata filters. Each item says which signals found it.
   * Degrades instead of failing when the embedder, the vector index or an optional source is
   * unavailable (see `bundle.degraded`). Access counts are updated later, in batches.
   * Invalid input throws ValidationError.
   */
  async remember(query: RecallQuery): Promise<MemoryBundle> {
    return this.d.gate ? this.d.gate.run(() => this.recallNow(query)) : this.recallNow(query);
  }

  private async recallNow(query: RecallQuery): Promise<MemoryBundle> {
    // The principal's agent is in the scope: recall then also searches the pools it may read.
    // The user's settings fill what the call leaves unset (topK, rerank) and may switch recall
    // off for the user or this agent; a user who never changed them reads the defaults.
    const raw = parseInput(RecallQuerySchema, query, 'recall query');
    const settings = this.d.settings ? await this.d.settings.get(raw.userId) : undefined;
    const skip = settings ? recallSkipReason(settings, this.principal.agentId) : null;
    const q = settings ? withSettings(raw, query, settings) : raw;
    const scope = this.scope(q.userId, { channels: q.channels, connections: q.activeConnections ?? null });
    if (skip) return { ...emptyBundle(q, [...scope.channels]), skipped: skip };
    const [bundle, learned] = await Promise.all([
      this.d.recall.recall(q, scope),
      q.activeConnections?.length && this.d.learnedInfo ? this.d.learnedInfo.list(q.userId, q.activeConnections) : Promise.resolve([]),
    ]);
    return learned.length > 0 ? { ...bundle, learnedInfo: learned } : bundle;
  }

  /** A compact prompt block for `bundle` within `tokenBudget` tokens; '' when the bundle is empty. */
  formatContext(bundle: MemoryBundle, opts: FormatOptions = {}): string {
    parseInput(FormatOptionsSchema, opts, 'format options');
    return formatContext(bundle, opts);
  }

  // --- Short-term tier, settings, connection learned info, tier statistics.

  private stm?: ShortTermMemory;
  /** The short-term tier of agent sessions (src/short-term): typed entries with a TTL, durable in PostgreSQL. */
  get shortTerm(): ShortTermMemory {
    if (!this.d.shortTerm) throw new ValidationError('the short-term tier is not configured in this AgentMemory');
    return (this.stm ??= new ShortTermMemory(
      { store: this.d.shortTerm, audit: this.d.audit, clock: this.d.clock ?? { now: () => new Date() }, forgetFacts: (scope, ids) => this.d.semantic.deleteFacts(scope, ids) },
      this.principal,
    ));
  }

  /** A user's memory settings (the defaults when never changed). */
  async getSettings(userId: string): Promise<MemorySettings> {
    const u = parseInput(UserIdSchema, userId, 'user id');
    return this.settingsStore().get(u);
  }

  /** Changes a user's memory settings (absent keys unchanged; an agent set to null loses its override); audited. */
  async updateSettings(input: SettingsUpdate): Promise<MemorySettings> {
    const { userId, ...patch } = parseInput(SettingsUpdateSchema, input, 'settings update');
    const t0 = performance.now();
    const settings = await this.settingsStore().update(userId, patch);
    this.d.audit.logWrite({
      operation: 'update_settings',
      memoryType: 'system',
      userId,
      channel: '_global',
      affectedIds: [],
      latencyMs: performance.now() - t0,
      payload: patch,
      metadata: this.actor(),
    });
    return settings;
  }

  /** The learned-info documents of the user's connections (all, or the given ones). */
  async getLearnedInfo(userId: string, connectionIds?: string[]): Promise<LearnedInfo[]> {
    const u = parseInput(UserIdSchema, userId, 'user id');
    return this.learnedInfoStore().list(u, connectionIds ?? null);
  }

  /**
   * Replaces or merges one connection's learned info (seed 000 §3.E); stringified JSON
   * values are parsed. Audited.
   */
  async writeLearnedInfo(input: LearnedInfoWrite): Promise<LearnedInfo> {
    const w = parseInput(LearnedInfoWriteSchema, input, 'learned info');
    const t0 = performance.now();
    const doc = await this.learnedInfoStore().write(w.userId, w.connectionId, w.info, w.mode);
    this.d.audit.logWrite({
      operation: `learned_info_${w.mode}`,
      memoryType: 'semantic',
      userId: w.userId,
      channel: '_global',
      affectedIds: [w.connectionId],
      latencyMs: performance.now() - t0,
      payload: { info: w.info },
      metadata: this.actor(),
    });
    return doc;
  }

  /** Deletes one connection's learned info; NotFoundError when there is none. Audited. */
  async deleteLearnedInfo(userId: string, connectionId: string): Promise<{ deleted: true }> {
    const q = parseInput(z.object({ userId: UserIdSchema, connectionId: ConnectionIdSchema }), { userId, connectionId }, 'learned info');
    if (!(await this.learnedInfoStore().delete(q.userId, q.connectionId))) throw new NotFoundError('learned info', q.connectionId);
    this.d.audit.logWrite({ operation: 'learned_info_delete', memoryType: 'semantic', userId: q.userId, channel: '_global', affectedIds: [q.connectionId], metadata: this.actor() });
    return { deleted: true };
  }

  /** Counts per memory tier (working, short-term, long-term, shared) for the user, as this principal sees them. */
  async tierStats(userId: string): Promise<TierStats> {
    const u = parseInput(UserIdSchema, userId, 'user id');
    return tierStats(this.d.tierCounters ?? [], this.scope(u));
  }

  private settingsStore(): SettingsStore {
    if (!this.d.settings) throw new ValidationError('settings are not configured in this AgentMemory');
    return this.d.settings;
  }

  private learnedInfoStore(): LearnedInfoStore {
    if (!this.d.learnedInfo) throw new ValidationError('connection learned info is not configured in this AgentMemory');
    return this.d.learnedInfo;
  }

  private actor(): Record<string, unknown> {
    return { tenantId: this.principal.tenantId, keyId: this.principal.keyId, agentId: this.principal.agentId };
  }

  /** Runs a read and records it in the audit log (kept at level `reads` and above). */
  private async audited<T extends unknown[]>(operation: string, scope: AccessScope, query: string, channels: string[], read: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    const result = await read();
    this.d.audit.logRead({
      operation,
      memoryType: 'episodic',
      userId: scope.userId,
      channel: scope.channel,
      query,
      channelsSearched: channels,
      resultCount: result.length,
      affectedIds: returnedIds(result),
      latencyMs: performance.now() - t0,
    });
    return result;
  }

  /** Working memory of one session (Redis, or process memory while Redis is down). */
  session(scope: z.input<typeof SessionSchema>): WorkingSession {
    const s = parseInput(SessionSchema, scope, 'session');
    return new WorkingSession(this.d.working, sessionScope(this.scope(s.userId, { channel: s.channel }), s.conversationId));
  }

  // --- Knowledge: semantic, procedural and goal memory (see src/semantic, src/procedural,
  // src/goals). Each part validates, embeds, writes and audits; the methods below are the
  // spec's names for them. Every id of another user behaves as not found.
  private parts?: { semantic: SemanticMemory; procedural: ProceduralMemory; goals: GoalMemory; pools?: PoolMemory };
  private get knowledge() {
    const { embedder, audit, log } = this.d;
    return (this.parts ??= {
      semantic: new SemanticMemory(
        {
          store: this.d.semantic,
          embedder,
          audit,
          log,
          promotionThresholds: this.d.promotionThresholds,
          entityMatchSimilarity: this.d.entityMatchSimilarity,
          reviseProfile: (userId, gone, added) => this.d.profiles?.revise?.(userId, gone, added) ?? Promise.resolve(),
        },
        this.principal,
      ),
      procedural: new ProceduralMemory({ store: this.d.procedural, invocationLog: this.d.toolLog, embedder, audit, log }, this.principal),
      goals: new GoalMemory({ store: this.d.goals, embedder, audit, log }, this.principal),
      pools: this.d.pools && new PoolMemory({ store: this.d.pools, embedder, audit, log, fusion: this.d.poolFusion ?? DEFAULT_POOL_FUSION }, this.principal),
    });
  }
  /**
   * What this memory's principal sees of a user's whole memory (export, stats): undefined for
   * the whole tenant (an admin key, the library); for an agent, the pools it may read (its
   * short-term entries are its own by the view's rules, src/tenancy AgentView).
   */
  async agentView(): Promise<AgentView | undefined> {
    const { agentId } = this.principal;
    if (agentId === null) return undefined;
    const readable = this.d.pools ? await this.d.pools.readablePools(this.principal) : [];
    return { agentId, readablePools: readable.map((p) => p.id) };
  }
  /**
   * Shared memory pools, acting as this memory's principal (an agent key's agent; an admin
   * key or the library act for the whole tenant). Throws when no pool store is wired.
   */
  get pools(): PoolMemory {
    const pools = this.knowledge.pools;
    if (!pools) throw new ValidationError('memory pools are not configured in this AgentMemory');
    return pools;
  }
  /** Entities, facts, relationships: every semantic operation (search by text, delete, find by name, ...). */
  get semantic(): SemanticMemory {
    return this.knowledge.semantic;
  }
  /** Listings page by page and the studio's edits (restore, merge, delete a turn or a conversation): src/browse. */
  get browse(): MemoryBrowser {
    const { conversations, curation, forgetter, audit } = this.d;
    if (!conversations || !curation || !forgetter) throw new ValidationError('browsing is not configured in this AgentMemory');
    return (this.browser ??= new MemoryBrowser({ conversations, knowledge: curation, forgetter, strategies: this.d.procedural, audit }, this.principal));
  }
  private browser?: MemoryBrowser;
  /** Tool invocations and strategies. */
  get procedural(): ProceduralMemory {
    return this.knowledge.procedural;
  }
  /** Goals with sub-goals and blockers. */
  get goals(): GoalMemory {
    return this.knowledge.goals;
  }
  upsertEntity: SemanticMemory['upsertEntity'] = (i) => this.semantic.upsertEntity(i);
  storeFact: SemanticMemory['storeFact'] = (i) => this.semantic.storeFact(i);
  learnFact: SemanticMemory['learnFact'] = (i) => this.semantic.learnFact(i);
  createRelationship: SemanticMemory['createRelationship'] = (i) => this.semantic.createRelationship(i);
  getEntityGraph: SemanticMemory['getEntityGraph'] = (q) => this.semantic.getEntityGraph(q);
  getEntityTimeline: SemanticMemory['getEntityTimeline'] = (q) => this.semantic.getEntityTimeline(q);
  vectorSearchFacts: SemanticMemory['vectorSearchFacts'] = (q) => this.semantic.vectorSearchFacts(q);
  vectorSearchEntities: SemanticMemory['vectorSearchEntities'] = (q) => this.semantic.vectorSearchEntities(q);
  correctFact: SemanticMemory['correctFact'] = (i) => this.semantic.correctFact(i);
  confirmFact: SemanticMemory['confirmFact'] = (u, id) => this.semantic.confirmFact(u, id);
  promoteToGlobal: SemanticMemory['promoteToGlobal'] = (i) => this.semantic.promoteToGlobal(i);
  recordInvocation: ProceduralMemory['recordInvocation'] = (i) => this.procedural.recordInvocation(i);
  learnStrategy: ProceduralMemory['learnStrategy'] = (i) => this.procedural.learnStrategy(i);
  findStrategies: ProceduralMemory['findStrategies'] = (q) => this.procedural.findStrategies(q);
  reinforceStrategy: ProceduralMemory['reinforceStrategy'] = (u, id, ok) => this.procedural.reinforceStrategy(u, id, ok);
  getToolStats: ProceduralMemory['getToolStats'] = (q) => this.procedural.getToolStats(q);
  addGoal: GoalMemory['addGoal'] = (i) => this.goals.addGoal(i);
  getGoal: GoalMemory['getGoal'] = (u, id) => this.goals.getGoal(u, id);
  completeGoal: GoalMemory['completeGoal'] = (i) => this.goals.completeGoal(i);
  listActiveGoals: GoalMemory['listActiveGoals'] = (q) => this.goals.listActiveGoals(q);

  // --- Observations and consolidation (see src/observations, src/worker).

  /**
   * Queues an observation about the user ("prefers short emails") durably in Postgres.
   * Resolves once it is committed; the `consolidate` job turns it into facts, the profile
   * and the narrative exactly once. Idempotent on `opts.id`. Invalid input throws
   * ValidationError and nothing is queued.
   */
  async recordObservation(
    userId: string,
    content: string,
    category: ObservationCategory,
    opts: { channel?: string; id?: string; connectionId?: string; sourceMetadata?: Record<string, string | number | boolean> } = {},
  ): Promise<{ observation: Observation; created: boolean }> {
    const o = parseInput(ObservationInputSchema, { userId, content, category, ...opts }, 'observation');
    if (!this.d.observations) throw new ValidationError('observations are not configured in this AgentMemory');
    const t0 = performance.now();
    const result = await this.d.observations.record(this.scope(o.userId, { channel: o.channel }), {
      id: o.id ?? randomUUID(),
      category: o.category,
      content: o.content,
      sourceMetadata: o.sourceMetadata ?? {},
      connectionId: o.connectionId ?? null,
    });
    if (result.created) {
      this.d.audit.logWrite({
        operation: 'record_observation',
        memoryType: 'semantic',
        userId: o.userId,
        channel: o.channel,
        affectedIds: [result.observation.id],
        latencyMs: performance.now() - t0,
        payload: { category: o.category, content: o.content },
      });
    }
    return result;
  }

  /** The schema-free profile and working narrative kept by consolidation (empty until the first run). */
  async getUserProfile(userId: string): Promise<UserProfile> {
    const u = parseInput(UserIdSchema, userId, 'user id');
    if (!this.d.profiles) throw new ValidationError('profiles are not configured in this AgentMemory');
    return this.d.profiles.get(u);
  }

  /** Runs consolidation now (conversations and observations -> knowledge); same job the worker schedules. */
  async consolidate(opts: { userIds?: string[] } = {}): Promise<JobRunResult> {
    return this.runJob('consolidate', opts);
  }

  /** Runs one worker job now; resolves with its outcome (`skipped` when another worker holds it). */
  async runJob(name: JobName, opts: { userIds?: string[] } = {}): Promise<JobRunResult> {
    const userIds = opts.userIds?.map((u) => parseInput(UserIdSchema, u, 'user id'));
    if (!this.d.runJob) throw new ValidationError('background jobs are not configured in this AgentMemory');
    return this.d.runJob(name, { userIds });
  }
}

/** The working-memory operations of one session, with inputs validated. */
export class WorkingSession {
  constructor(
    private readonly store: WorkingMemoryStore,
    readonly scope: SessionScope,
  ) {}

  recentTurns(limit = 20) {
    return this.store.getRecentTurns(this.scope, parseInput(z.number().int().min(1).max(1000), limit, 'limit'));
  }
  set(key: string, value: unknown, ttlSeconds?: number) {
    parseInput(z.object({ key: ContextKeySchema, ttlSeconds: ContextTtlSchema.optional() }), { key, ttlSeconds }, 'context value');
    if (value === undefined) throw new ValidationError('invalid context value: value is required');
    return this.store.set(this.scope, key, value, ttlSeconds);
  }
  get(key: string) {
    return this.store.get(this.scope, key);
  }
  delete(key: string) {
    return this.store.delete(this.scope, key);
  }
  context() {
    return this.store.getContext(this.scope);
  }
  pushThought(thought: string) {
    return this.store.pushThought(this.scope, parseInput(z.string().min(1).max(10_000), thought, 'thought'));
  }
  thoughts(limit = 20) {
    return this.store.getThoughts(this.scope, limit);
  }
  setActiveGoal(goal: ActiveGoal) {
    return this.store.setActiveGoal(this.scope, parseInput(z.object({ goalId: IdSchema, description: z.string().min(1).max(5_000) }).strict(), goal, 'active goal'));
  }
  activeGoal() {
    return this.store.getActiveGoal(this.scope);
  }
  clear() {
    return this.store.clearSession(this.scope);
  }
}

/** The working-memory session a stored turn belongs to: the turn's own user, channel and conversation. */
function scopeOf(principal: AccessPrincipal, turn: Turn): SessionScope {
  return sessionScope(principalScope(principal, turn.userId, { channel: turn.channel }), turn.conversationId);
}

/** Pool search fusion when the composition root gives none: the recall defaults. */
const DEFAULT_POOL_FUSION: FusionSettings = { rrfK: 60, vectorWeight: 1, minVectorScore: 0.875 };

/** The query with the user's settings where the call left them unset: topK (the schema's default is 10) and rerank. */
function withSettings(q: ParsedRecallQuery, asked: RecallQuery, s: MemorySettings): ParsedRecallQuery {
  const topK = asked.topK === undefined && s.defaultTopK !== null ? s.defaultTopK : q.topK;
  const rerank = q.techniques?.rerank === undefined && s.rerank !== null ? s.rerank : q.techniques?.rerank;
  return { ...q, topK, techniques: rerank === undefined ? q.techniques : { ...q.techniques, rerank } };
}

/** A bundle with nothing in it (recall skipped by settings). */
function emptyBundle(q: ParsedRecallQuery, channels: string[]): MemoryBundle {
  return { query: q.query, userId: q.userId, channels, turns: [], facts: [], entities: [], strategies: [], goals: [], pools: [], profile: null, degraded: [], timings: { total: 0 } };
}

function hoursAgo(hours: number): string {
  return windowStart(hours);
}

function groupBy<T>(items: T[], key: (t: T) => string): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const g = groups.get(k);
    if (g) g.push(item);
    else groups.set(k, [item]);
  }
  return [...groups.values()];
}

/** What a rehearsal throws from inside its transaction so that it rolls back (a MnemographError, so stores pass it on unchanged). */
class RolledBack extends MnemographError {
  constructor() {
    super('ROLLED_BACK', 'system', 'a rehearsal, rolled back');
  }
}
