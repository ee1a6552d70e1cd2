import { NotFoundError } from '../errors';
import type { Handlers } from './handlers';
import type { KNOWLEDGE_ROUTE_DEFS } from './knowledge-route-defs';

/* The handlers of knowledge-route-defs.ts: each binds its definition to the facade. */

export const KNOWLEDGE_HANDLERS = {
  remember: async (input, { memory, recalled }) => {
    const bundle = await memory.remember(input);
    recalled(bundle);
    return bundle;
  },
  recallContext: async ({ tokenBudget, ...query }, { memory, external, recalled }) => {
    const bundle = await memory.remember(query);
    recalled(bundle);
    // The block cites turn ids: render it with the ids the caller knows.
    return { context: memory.formatContext(external(bundle), tokenBudget ? { tokenBudget } : {}) };
  },
  upsertEntity: (input, { memory }) => memory.upsertEntity(input),
  getEntity: async ({ userId, entityId }, { memory }) => (await memory.semantic.getEntity(userId, entityId)) ?? Promise.reject(new NotFoundError('entity', entityId)),
  findEntitiesByName: async (input, { memory }) => ({ entities: await memory.semantic.findEntitiesByName(input) }),
  searchEntitiesText: async (input, { memory }) => ({ results: await memory.semantic.searchEntitiesText(input) }),
  vectorSearchEntities: async (input, { memory }) => ({ results: await memory.vectorSearchEntities(input) }),
  getEntityGraph: (input, { memory }) => memory.getEntityGraph(input),
  getEntityTimeline: async (input, { memory }) => ({ entries: await memory.getEntityTimeline(input) }),
  deleteEntity: ({ userId, entityId }, { memory }) => memory.semantic.deleteEntity(userId, entityId),
  createRelationship: (input, { memory }) => memory.createRelationship(input),
  endRelationship: async (input, { memory }) => ({ relationships: await memory.semantic.endRelationship(input) }),
  learnFact: (input, { memory }) => memory.learnFact(input),
  storeFact: (input, { memory }) => memory.storeFact(input),
  getFact: async ({ userId, factId }, { memory }) => (await memory.semantic.getFact(userId, factId)) ?? Promise.reject(new NotFoundError('fact', factId)),
  searchFactsText: async (input, { memory }) => ({ results: await memory.semantic.searchFactsText(input) }),
  findFacts: async (input, { memory }) => ({ facts: await memory.semantic.findFacts(input) }),
  vectorSearchFacts: async (input, { memory }) => ({ results: await memory.vectorSearchFacts(input) }),
  correctFact: (input, { memory }) => memory.correctFact(input),
  confirmFact: ({ userId, factId }, { memory }) => memory.confirmFact(userId, factId),
  retractFact: ({ userId, factId, reason }, { memory }) => memory.semantic.retractFact(userId, factId, reason),
  promoteToGlobal: (input, { memory }) => memory.promoteToGlobal(input),
  recordInvocation: (input, { memory }) => memory.recordInvocation(input),
  getInvocations: async ({ userId, conversationId }, { memory }) => ({ invocations: await memory.procedural.getInvocations(userId, conversationId) }),
  getToolStats: async (input, { memory }) => ({ tools: await memory.getToolStats(input) }),
  learnStrategy: (input, { memory }) => memory.learnStrategy(input),
  findStrategies: async (input, { memory }) => ({ results: await memory.findStrategies(input) }),
  getStrategy: async ({ userId, strategyId }, { memory }) => (await memory.procedural.getStrategy(userId, strategyId)) ?? Promise.reject(new NotFoundError('strategy', strategyId)),
  reinforceStrategy: ({ userId, strategyId, success }, { memory }) => memory.reinforceStrategy(userId, strategyId, success),
  addGoal: (input, { memory }) => memory.addGoal(input),
  getGoal: async ({ userId, goalId }, { memory }) => (await memory.getGoal(userId, goalId)) ?? Promise.reject(new NotFoundError('goal', goalId)),
  completeGoal: (input, { memory }) => memory.completeGoal(input),
  addBlocker: ({ userId, goalId, blockerId }, { memory }) => memory.goals.addBlocker(userId, goalId, blockerId),
  listActiveGoals: async (input, { memory }) => ({ goals: await memory.listActiveGoals(input) }),
  recordObservation: ({ userId, content, category, ...opts }, { memory }) => memory.recordObservation(userId, content, category, opts),
  getUserProfile: ({ userId }, { memory }) => memory.getUserProfile(userId),
  consolidateUser: ({ userId }, { memory }) => memory.consolidate({ userIds: [userId] }),
} satisfies Handlers<typeof KNOWLEDGE_ROUTE_DEFS>;
