import { z } from 'zod';
import { NotFoundError } from '../errors';
import { GoalInputSchema, CompleteGoalInputSchema, ActiveGoalsQuerySchema } from '../goals/contract';
import type { AgentMemory } from '../memory/agent-memory';
import { ObservationInputSchema } from '../observations/contract';
import { FindStrategiesQuerySchema, InvocationInputSchema, StrategyInputSchema, ToolStatsQuerySchema } from '../procedural/contract';
import { RecallQuerySchema } from '../retrieval/contract';
import { IdSchema, UserIdSchema } from '../schemas';
import { CorrectFactInputSchema, EntityInputSchema, FactInputSchema, PromoteInputSchema, RelationshipInputSchema } from '../semantic/contract';
import { EndRelationshipSchema, EntityGraphQuerySchema, EntitySearchSchema, FactListSchema, FactSearchSchema, FindEntitiesSchema, TimelineQuerySchema } from '../semantic/schema';
import { route } from './contract';
import { TurnSchema } from './schemas';

/*
 * Routes of the knowledge, recall and observation operations of the facade (semantic,
 * procedural, goals, retrieval, observations, consolidation). Same rules as routes.ts:
 * input schemas are the library's; outputs are described loosely (key fields, others
 * passed through) because their subsystems own the exact shapes.
 */

const has = (name: keyof AgentMemory) => (m: AgentMemory) => typeof (m as unknown as Record<string, unknown>)[name] === 'function';
/** An object schema that passes unknown keys through, typed as its known keys (the facade's interfaces carry more). */
const loose = <S extends z.ZodRawShape>(shape: S) => z.looseObject(shape) as unknown as z.ZodObject<S>;
const Loose = <S extends z.ZodRawShape>(id: string, shape: S) => loose(shape).meta({ id });

const Fact = Loose('Fact', { id: z.string(), userId: z.string(), channel: z.string(), claim: z.string(), confidence: z.number(), status: z.string(), protected: z.boolean() });
const Entity = Loose('Entity', { id: z.string(), userId: z.string(), channel: z.string(), name: z.string(), type: z.string(), aliases: z.array(z.string()) });
const Relationship = Loose('Relationship', { id: z.string(), type: z.string(), sourceId: z.string(), targetId: z.string(), userId: z.string() });
const Strategy = Loose('Strategy', { id: z.string(), userId: z.string(), description: z.string(), toolSequence: z.array(z.string()) });
const Goal = Loose('Goal', { id: z.string(), userId: z.string(), description: z.string(), status: z.string(), priority: z.number() });
const Invocation = Loose('ToolInvocation', { id: z.string(), userId: z.string(), conversationId: z.string(), toolName: z.string(), success: z.boolean() });
const RecalledItem = Loose('RecalledItem', { id: z.string(), kind: z.string(), text: z.string(), relevance: z.number(), signals: z.record(z.string(), z.unknown()) });
const Bundle = Loose('MemoryBundle', {
  query: z.string(),
  userId: z.string(),
  turns: z.array(loose({ turn: TurnSchema, score: z.number(), signals: z.record(z.string(), z.unknown()) })),
  facts: z.array(RecalledItem),
  entities: z.array(RecalledItem),
  strategies: z.array(RecalledItem),
  goals: z.array(RecalledItem),
  profile: z.record(z.string(), z.unknown()).nullable(),
  degraded: z.array(z.string()),
  timings: z.record(z.string(), z.number()),
});
const EntityRef = z.object({ userId: UserIdSchema, entityId: IdSchema }).strict();
const FactRef = z.object({ userId: UserIdSchema, factId: IdSchema }).strict();

export const remember = route({
  id: 'remember',
  method: 'post',
  path: '/v1/recall',
  summary: 'Recall what matters for a query: turns, facts, entities, strategies, goals and the profile, each with the signals that found it',
  tag: 'recall',
  input: RecallQuerySchema,
  output: Bundle,
  status: 200,
  access: 'owned',
  available: has('remember'),
  handler: (input, { memory }) => memory.remember(input),
});

export const recallContext = route({
  id: 'recallContext',
  method: 'post',
  path: '/v1/recall/context',
  summary: 'Recall and format a compact prompt block within tokenBudget tokens ("" when nothing is relevant)',
  tag: 'recall',
  input: z.object({ ...RecallQuerySchema.shape, tokenBudget: z.number().int().min(1).max(1_000_000).optional() }).strict(),
  output: z.object({ context: z.string() }),
  status: 200,
  access: 'owned',
  available: has('formatContext'),
  handler: async ({ tokenBudget, ...query }, { memory, external }) => ({
    // The block cites turn ids: render it with the ids the caller knows.
    context: memory.formatContext(external(await memory.remember(query)), tokenBudget ? { tokenBudget } : {}),
  }),
});

export const upsertEntity = route({
  id: 'upsertEntity',
  method: 'post',
  path: '/v1/entities',
  summary: 'Create or merge an entity (resolved by id, name, alias or embedding similarity)',
  tag: 'entities',
  input: EntityInputSchema,
  output: loose({ entity: Entity, created: z.boolean() }),
  status: 201,
  access: 'claim',
  available: has('upsertEntity'),
  handler: (input, { memory }) => memory.upsertEntity(input),
});

export const findEntitiesByName = route({
  id: 'findEntitiesByName',
  method: 'post',
  path: '/v1/entities/by-name',
  summary: 'Entities whose name or alias matches (normalized)',
  tag: 'entities',
  input: FindEntitiesSchema,
  output: z.object({ entities: z.array(Entity) }),
  status: 200,
  access: 'owned',
  available: (m) => typeof m.semantic?.findEntitiesByName === 'function',
  handler: async (input, { memory }) => ({ entities: await memory.semantic.findEntitiesByName(input) }),
});

export const vectorSearchEntities = route({
  id: 'vectorSearchEntities',
  method: 'post',
  path: '/v1/entities/search',
  summary: 'Entities nearest to a query by embedding',
  tag: 'entities',
  input: EntitySearchSchema,
  output: z.object({ results: z.array(z.object({ entity: Entity, score: z.number() })) }),
  status: 200,
  access: 'owned',
  available: has('vectorSearchEntities'),
  handler: async (input, { memory }) => ({ results: await memory.vectorSearchEntities(input) }),
});

export const getEntityGraph = route({
  id: 'getEntityGraph',
  method: 'post',
  path: '/v1/entities/graph',
  summary: 'Entities around the given ones (depth 1-3), their current relationships and facts',
  tag: 'entities',
  input: EntityGraphQuerySchema,
  output: z.object({ entities: z.array(Entity), relationships: z.array(Relationship), facts: z.array(Fact) }),
  status: 200,
  access: 'owned',
  available: has('getEntityGraph'),
  handler: (input, { memory }) => memory.getEntityGraph(input),
});

export const getEntityTimeline = route({
  id: 'getEntityTimeline',
  method: 'post',
  path: '/v1/entities/timeline',
  summary: 'Facts and relationships of an entity over time, with validity windows',
  tag: 'entities',
  input: TimelineQuerySchema,
  output: z.object({ entries: z.array(loose({ kind: z.string(), validFrom: z.string(), validTo: z.string().nullable() })) }),
  status: 200,
  access: 'owned',
  available: has('getEntityTimeline'),
  handler: async (input, { memory }) => ({ entries: await memory.getEntityTimeline(input) }),
});

export const deleteEntity = route({
  id: 'deleteEntity',
  method: 'delete',
  path: '/v1/users/:userId/entities/:entityId',
  summary: 'Delete an entity (soft: kept as history)',
  tag: 'entities',
  input: EntityRef,
  output: Entity,
  status: 200,
  access: 'owned',
  available: (m) => typeof m.semantic?.deleteEntity === 'function',
  handler: ({ userId, entityId }, { memory }) => memory.semantic.deleteEntity(userId, entityId),
});

export const createRelationship = route({
  id: 'createRelationship',
  method: 'post',
  path: '/v1/relationships',
  summary: 'Link two entities of the user with a typed, time-bounded relationship',
  tag: 'entities',
  input: RelationshipInputSchema,
  output: loose({ relationship: Relationship, created: z.boolean() }),
  status: 201,
  access: 'claim',
  available: has('createRelationship'),
  handler: (input, { memory }) => memory.createRelationship(input),
});

export const endRelationship = route({
  id: 'endRelationship',
  method: 'post',
  path: '/v1/relationships/end',
  summary: 'Close the open relationships of a type between two entities (history kept)',
  tag: 'entities',
  input: EndRelationshipSchema,
  output: z.object({ relationships: z.array(Relationship) }),
  status: 200,
  access: 'owned',
  available: (m) => typeof m.semantic?.endRelationship === 'function',
  handler: async (input, { memory }) => ({ relationships: await memory.semantic.endRelationship(input) }),
});

export const learnFact = route({
  id: 'learnFact',
  method: 'post',
  path: '/v1/facts',
  summary: 'Learn a fact: reinforces an identical active claim, supersedes by predicate, else creates',
  tag: 'facts',
  input: FactInputSchema,
  output: loose({ fact: Fact, created: z.boolean(), reinforced: z.boolean(), superseded: z.array(z.string()) }),
  status: 201,
  access: 'claim',
  available: has('learnFact'),
  handler: (input, { memory }) => memory.learnFact(input),
});

export const getFact = route({
  id: 'getFact',
  method: 'get',
  path: '/v1/users/:userId/facts/:factId',
  summary: 'One fact (404 when it is not the user\'s)',
  tag: 'facts',
  input: FactRef,
  output: Fact,
  status: 200,
  access: 'owned',
  available: (m) => typeof m.semantic?.getFact === 'function',
  handler: async ({ userId, factId }, { memory }) => (await memory.semantic.getFact(userId, factId)) ?? Promise.reject(new NotFoundError('fact', factId)),
});

export const findFacts = route({
  id: 'findFacts',
  method: 'post',
  path: '/v1/facts/list',
  summary: 'Facts of the user, filtered by entity, predicate, confidence',
  tag: 'facts',
  input: FactListSchema,
  output: z.object({ facts: z.array(Fact) }),
  status: 200,
  access: 'owned',
  available: (m) => typeof m.semantic?.findFacts === 'function',
  handler: async (input, { memory }) => ({ facts: await memory.semantic.findFacts(input) }),
});

export const vectorSearchFacts = route({
  id: 'vectorSearchFacts',
  method: 'post',
  path: '/v1/facts/search',
  summary: 'Facts nearest to a query by embedding',
  tag: 'facts',
  input: FactSearchSchema,
  output: z.object({ results: z.array(z.object({ fact: Fact, score: z.number() })) }),
  status: 200,
  access: 'owned',
  available: has('vectorSearchFacts'),
  handler: async (input, { memory }) => ({ results: await memory.vectorSearchFacts(input) }),
});

export const correctFact = route({
  id: 'correctFact',
  method: 'post',
  path: '/v1/facts/correct',
  summary: 'Replace a fact with a corrected claim; the old one is closed and linked (SUPERSEDES)',
  tag: 'facts',
  input: CorrectFactInputSchema,
  output: z.object({ oldFact: Fact, newFact: Fact }),
  status: 200,
  access: 'owned',
  available: has('correctFact'),
  handler: (input, { memory }) => memory.correctFact(input),
});

export const confirmFact = route({
  id: 'confirmFact',
  method: 'post',
  path: '/v1/users/:userId/facts/:factId/confirm',
  summary: 'Mark a fact confirmed by the user (protected from decay and cleanup)',
  tag: 'facts',
  input: FactRef,
  output: Fact,
  status: 200,
  access: 'owned',
  available: has('confirmFact'),
  handler: ({ userId, factId }, { memory }) => memory.confirmFact(userId, factId),
});

export const retractFact = route({
  id: 'retractFact',
  method: 'post',
  path: '/v1/users/:userId/facts/:factId/retract',
  summary: 'Retract a fact (soft delete: valid_to = now, history kept)',
  tag: 'facts',
  input: z.object({ userId: UserIdSchema, factId: IdSchema, reason: z.string().max(1_000).optional() }).strict(),
  output: Fact,
  status: 200,
  access: 'owned',
  available: (m) => typeof m.semantic?.retractFact === 'function',
  handler: ({ userId, factId, reason }, { memory }) => memory.semantic.retractFact(userId, factId, reason),
});

export const promoteToGlobal = route({
  id: 'promoteToGlobal',
  method: 'post',
  path: '/v1/facts/promote',
  summary: 'Promote a project fact to _global when it passes the thresholds (or with force)',
  tag: 'facts',
  input: PromoteInputSchema,
  output: loose({ promoted: z.boolean(), globalFact: Fact.nullable() }),
  status: 200,
  access: 'owned',
  available: has('promoteToGlobal'),
  handler: (input, { memory }) => memory.promoteToGlobal(input),
});

export const recordInvocation = route({
  id: 'recordInvocation',
  method: 'post',
  path: '/v1/tool-invocations',
  summary: 'Record a tool call (idempotent on invocationId)',
  tag: 'procedural',
  input: InvocationInputSchema,
  output: z.object({ invocation: Invocation, created: z.boolean() }),
  status: 201,
  access: 'claim',
  available: has('recordInvocation'),
  handler: (input, { memory }) => memory.recordInvocation(input),
});

export const getInvocations = route({
  id: 'getInvocations',
  method: 'get',
  path: '/v1/users/:userId/conversations/:conversationId/tool-invocations',
  summary: 'Tool calls of a conversation, in order',
  tag: 'procedural',
  input: z.object({ userId: UserIdSchema, conversationId: IdSchema }).strict(),
  output: z.object({ invocations: z.array(Invocation) }),
  status: 200,
  access: 'owned',
  available: (m) => typeof m.procedural?.getInvocations === 'function',
  handler: async ({ userId, conversationId }, { memory }) => ({ invocations: await memory.procedural.getInvocations(userId, conversationId) }),
});

export const getToolStats = route({
  id: 'getToolStats',
  method: 'post',
  path: '/v1/tools/stats',
  summary: 'Per-tool success rate and latency of the user',
  tag: 'procedural',
  input: ToolStatsQuerySchema,
  output: z.object({ tools: z.array(loose({ toolName: z.string(), invocations: z.number(), successRate: z.number() })) }),
  status: 200,
  access: 'owned',
  available: has('getToolStats'),
  handler: async (input, { memory }) => ({ tools: await memory.getToolStats(input) }),
});

export const learnStrategy = route({
  id: 'learnStrategy',
  method: 'post',
  path: '/v1/strategies',
  summary: 'Learn (or reinforce) a strategy: a tool sequence that worked for a kind of task',
  tag: 'procedural',
  input: StrategyInputSchema,
  output: z.object({ strategy: Strategy, created: z.boolean() }),
  status: 201,
  access: 'claim',
  available: has('learnStrategy'),
  handler: (input, { memory }) => memory.learnStrategy(input),
});

export const findStrategies = route({
  id: 'findStrategies',
  method: 'post',
  path: '/v1/strategies/search',
  summary: 'Strategies for a task, ranked by relevance and success rate',
  tag: 'procedural',
  input: FindStrategiesQuerySchema,
  output: z.object({ results: z.array(z.object({ strategy: Strategy, score: z.number() })) }),
  status: 200,
  access: 'owned',
  available: has('findStrategies'),
  handler: async (input, { memory }) => ({ results: await memory.findStrategies(input) }),
});

export const getStrategy = route({
  id: 'getStrategy',
  method: 'get',
  path: '/v1/users/:userId/strategies/:strategyId',
  summary: 'One strategy (404 when it is not the user\'s)',
  tag: 'procedural',
  input: z.object({ userId: UserIdSchema, strategyId: IdSchema }).strict(),
  output: Strategy,
  status: 200,
  access: 'owned',
  available: (m) => typeof m.procedural?.getStrategy === 'function',
  handler: async ({ userId, strategyId }, { memory }) => (await memory.procedural.getStrategy(userId, strategyId)) ?? Promise.reject(new NotFoundError('strategy', strategyId)),
});

export const reinforceStrategy = route({
  id: 'reinforceStrategy',
  method: 'post',
  path: '/v1/users/:userId/strategies/:strategyId/reinforce',
  summary: 'Count a success or failure of a strategy',
  tag: 'procedural',
  input: z.object({ userId: UserIdSchema, strategyId: IdSchema, success: z.boolean() }).strict(),
  output: Strategy,
  status: 200,
  access: 'owned',
  available: has('reinforceStrategy'),
  handler: ({ userId, strategyId, success }, { memory }) => memory.reinforceStrategy(userId, strategyId, success),
});

export const addGoal = route({
  id: 'addGoal',
  method: 'post',
  path: '/v1/goals',
  summary: 'Add a goal (optionally a sub-goal, or blocked by others)',
  tag: 'goals',
  input: GoalInputSchema,
  output: z.object({ goal: Goal, created: z.boolean() }),
  status: 201,
  access: 'claim',
  available: has('addGoal'),
  handler: (input, { memory }) => memory.addGoal(input),
});

export const getGoal = route({
  id: 'getGoal',
  method: 'get',
  path: '/v1/users/:userId/goals/:goalId',
  summary: 'A goal with its parent, sub-goals and blockers (404 when it is not the user\'s)',
  tag: 'goals',
  input: z.object({ userId: UserIdSchema, goalId: IdSchema }).strict(),
  output: loose({ goal: Goal, parent: Goal.nullable(), subgoals: z.array(Goal), blockedBy: z.array(Goal) }),
  status: 200,
  access: 'owned',
  available: has('getGoal'),
  handler: async ({ userId, goalId }, { memory }) => (await memory.getGoal(userId, goalId)) ?? Promise.reject(new NotFoundError('goal', goalId)),
});

export const completeGoal = route({
  id: 'completeGoal',
  method: 'post',
  path: '/v1/goals/complete',
  summary: 'Close a goal (completed, abandoned, ...); goals it alone blocked become active',
  tag: 'goals',
  input: CompleteGoalInputSchema,
  output: z.object({ goal: Goal, unblocked: z.array(z.string()) }),
  status: 200,
  access: 'owned',
  available: has('completeGoal'),
  handler: (input, { memory }) => memory.completeGoal(input),
});

export const listActiveGoals = route({
  id: 'listActiveGoals',
  method: 'post',
  path: '/v1/goals/active',
  summary: 'Open goals of the user, by priority',
  tag: 'goals',
  input: ActiveGoalsQuerySchema,
  output: z.object({ goals: z.array(Goal) }),
  status: 200,
  access: 'owned',
  available: has('listActiveGoals'),
  handler: async (input, { memory }) => ({ goals: await memory.listActiveGoals(input) }),
});

export const recordObservation = route({
  id: 'recordObservation',
  method: 'post',
  path: '/v1/observations',
  summary: 'Queue an observation about the user; consolidation folds it into facts and the profile exactly once',
  tag: 'observations',
  input: ObservationInputSchema,
  output: z.object({ observation: Loose('Observation', { id: z.string(), userId: z.string(), category: z.string(), content: z.string() }), created: z.boolean() }),
  status: 201,
  access: 'claim',
  available: has('recordObservation'),
  handler: ({ userId, content, category, ...opts }, { memory }) => memory.recordObservation(userId, content, category, opts),
});

export const getUserProfile = route({
  id: 'getUserProfile',
  method: 'get',
  path: '/v1/users/:userId/profile',
  summary: 'The profile and working narrative kept by consolidation',
  tag: 'observations',
  input: z.object({ userId: UserIdSchema }).strict(),
  output: loose({ userId: z.string(), profile: z.record(z.string(), z.unknown()), narrative: z.string().nullable() }),
  status: 200,
  access: 'owned',
  available: has('getUserProfile'),
  handler: ({ userId }, { memory }) => memory.getUserProfile(userId),
});

export const consolidateUser = route({
  id: 'consolidateUser',
  method: 'post',
  path: '/v1/users/:userId/consolidate',
  summary: "Run consolidation now for one user (the worker's job, limited to this user)",
  tag: 'observations',
  input: z.object({ userId: UserIdSchema }).strict(),
  output: loose({ job: z.string(), status: z.string(), durationMs: z.number() }),
  status: 200,
  access: 'owned',
  available: has('consolidate'),
  handler: ({ userId }, { memory }) => memory.consolidate({ userIds: [userId] }),
});

export const storeFact = route({
  id: 'storeFact',
  method: 'post',
  path: '/v1/facts/raw',
  summary: 'Store a fact as given (no reinforcement of an identical claim; supersedes only what it names)',
  tag: 'facts',
  input: FactInputSchema,
  output: z.object({ fact: Fact, created: z.boolean(), reinforced: z.boolean(), superseded: z.array(z.string()) }),
  status: 201,
  access: 'claim',
  available: has('storeFact'),
  handler: (input, { memory }) => memory.storeFact(input),
});

export const searchFactsText = route({
  id: 'searchFactsText',
  method: 'post',
  path: '/v1/facts/search-text',
  summary: 'Facts matching a keyword query (full-text, BM25)',
  tag: 'facts',
  input: FactSearchSchema,
  output: z.object({ results: z.array(z.object({ fact: Fact, score: z.number() })) }),
  status: 200,
  access: 'owned',
  available: (m) => typeof m.semantic?.searchFactsText === 'function',
  handler: async (input, { memory }) => ({ results: await memory.semantic.searchFactsText(input) }),
});

export const getEntity = route({
  id: 'getEntity',
  method: 'get',
  path: '/v1/users/:userId/entities/:entityId',
  summary: "One entity (404 when it is not the user's)",
  tag: 'entities',
  input: EntityRef,
  output: Entity,
  status: 200,
  access: 'owned',
  available: (m) => typeof m.semantic?.getEntity === 'function',
  handler: async ({ userId, entityId }, { memory }) => (await memory.semantic.getEntity(userId, entityId)) ?? Promise.reject(new NotFoundError('entity', entityId)),
});

export const searchEntitiesText = route({
  id: 'searchEntitiesText',
  method: 'post',
  path: '/v1/entities/search-text',
  summary: 'Entities matching a keyword query over names, aliases and descriptions (full-text)',
  tag: 'entities',
  input: EntitySearchSchema,
  output: z.object({ results: z.array(z.object({ entity: Entity, score: z.number() })) }),
  status: 200,
  access: 'owned',
  available: (m) => typeof m.semantic?.searchEntitiesText === 'function',
  handler: async (input, { memory }) => ({ results: await memory.semantic.searchEntitiesText(input) }),
});

export const addBlocker = route({
  id: 'addBlocker',
  method: 'post',
  path: '/v1/users/:userId/goals/:goalId/blockers',
  summary: 'Make a goal wait for another goal of the user (BLOCKED_BY)',
  tag: 'goals',
  input: z.object({ userId: UserIdSchema, goalId: IdSchema, blockerId: IdSchema }).strict(),
  output: Goal,
  status: 200,
  access: 'owned',
  available: (m) => typeof m.goals?.addBlocker === 'function',
  handler: ({ userId, goalId, blockerId }, { memory }) => memory.goals.addBlocker(userId, goalId, blockerId),
});

export const KNOWLEDGE_ROUTES = [
  remember,
  recallContext,
  upsertEntity,
  getEntity,
  findEntitiesByName,
  searchEntitiesText,
  vectorSearchEntities,
  getEntityGraph,
  getEntityTimeline,
  deleteEntity,
  createRelationship,
  endRelationship,
  learnFact,
  storeFact,
  getFact,
  searchFactsText,
  findFacts,
  vectorSearchFacts,
  correctFact,
  confirmFact,
  retractFact,
  promoteToGlobal,
  recordInvocation,
  getInvocations,
  getToolStats,
  learnStrategy,
  findStrategies,
  getStrategy,
  reinforceStrategy,
  addGoal,
  getGoal,
  completeGoal,
  addBlocker,
  listActiveGoals,
  recordObservation,
  getUserProfile,
  consolidateUser,
] as const;
