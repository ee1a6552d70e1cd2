import * as z from 'zod';
import { TurnRoleSchema } from '../episodic/schema';

/**
 * Response schemas. Requests are validated by the library's own input schemas; responses
 * are described here for the OpenAPI document and the client's types, and the API tests
 * check every response against them, so the document cannot drift from what is served.
 * Zod only: part of the wire contract the client bundles.
 */
export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().describe('stable machine-readable code, e.g. VALIDATION_FAILED, NOT_FOUND, RATE_LIMITED'),
      message: z.string().describe('what went wrong and how to fix it'),
      details: z.record(z.string(), z.unknown()),
      requestId: z.string().optional(),
    }),
  })
  .meta({ id: 'Error' });

const MetadataSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

export const TurnSchema = z
  .object({
    id: z.string().describe('"<conversationId>:<index>"'),
    userId: z.string(),
    channel: z.string(),
    conversationId: z.string(),
    index: z.number().int(),
    role: TurnRoleSchema,
    content: z.string(),
    timestamp: z.string(),
    tokenCount: z.number().int(),
    metadata: MetadataSchema,
    embedded: z.boolean().describe('false until the background embedder has embedded it'),
  })
  .meta({ id: 'Turn' });

export const StoreTurnResultSchema = z.object({ turn: TurnSchema, created: z.boolean().describe('false when (conversationId, index) was already stored') }).meta({ id: 'StoreTurnResult' });

export const TurnsSchema = z.object({ turns: z.array(TurnSchema) });
export const ScoredTurnsSchema = z.object({ results: z.array(z.object({ turn: TurnSchema, score: z.number() })) });

export const OkSchema = z.object({ ok: z.literal(true) });

const WorkingTurnSchema = z.object({ id: z.string(), role: z.string(), content: z.string(), timestamp: z.string(), index: z.number().int() });
export const SessionSnapshotSchema = z
  .object({
    recentTurns: z.array(WorkingTurnSchema),
    context: z.record(z.string(), z.unknown()),
    thoughts: z.array(z.object({ thought: z.string(), at: z.string() })),
    activeGoal: z.object({ goalId: z.string(), description: z.string() }).nullable(),
  })
  .meta({ id: 'SessionSnapshot' });

export const UserStatsSchema = z
  .object({
    userId: z.string(),
    nodes: z.record(z.string(), z.number().int()).describe("the user's Neo4j nodes per label"),
    rows: z.record(z.string(), z.number().int()).describe("the user's PostgreSQL rows per table"),
    workingKeys: z.number().int().describe('live working-memory keys in Redis'),
  })
  .meta({ id: 'UserStats' });

export const ErasureReportSchema = z
  .object({
    userId: z.string(),
    nodesDeleted: z.number().int(),
    rowsDeleted: z.record(z.string(), z.number().int()),
    redisKeysDeleted: z.number().int(),
    auditRowsRedacted: z.number().int(),
    receipt: z
      .string()
      .optional()
      .describe("the erasure record's receipt (JSON text: record id, chain position, hashes, counts); keep it: `mnemograph audit verify-receipt` checks it against the audit chain later"),
  })
  .meta({ id: 'ErasureReport' });

/** An object schema that passes unknown keys through, typed as its known keys (the facade's interfaces carry more). */
export const loose = <S extends z.ZodRawShape>(shape: S) => z.looseObject(shape) as unknown as z.ZodObject<S>;
const Loose = <S extends z.ZodRawShape>(id: string, shape: S) => loose(shape).meta({ id });

// Knowledge, recall and observation outputs are described loosely (key fields, others passed
// through) because their subsystems own the exact shapes.
export const FactSchema = Loose('Fact', { id: z.string(), userId: z.string(), channel: z.string(), claim: z.string(), confidence: z.number(), status: z.string(), protected: z.boolean() });
export const EntitySchema = Loose('Entity', { id: z.string(), userId: z.string(), channel: z.string(), name: z.string(), type: z.string(), aliases: z.array(z.string()) });
export const RelationshipSchema = Loose('Relationship', { id: z.string(), type: z.string(), sourceId: z.string(), targetId: z.string(), userId: z.string() });
export const StrategySchema = Loose('Strategy', {
  id: z.string(),
  userId: z.string(),
  channel: z.string(),
  description: z.string(),
  toolSequence: z.array(z.string()),
  successCount: z.number().int(),
  failureCount: z.number().int(),
  successRate: z.number().describe('Laplace-smoothed: (success + 1) / (success + failure + 2)'),
});
export const GoalSchema = Loose('Goal', { id: z.string(), userId: z.string(), description: z.string(), status: z.string(), priority: z.number() });
export const InvocationSchema = Loose('ToolInvocation', { id: z.string(), userId: z.string(), conversationId: z.string(), toolName: z.string(), success: z.boolean() });
export const ObservationSchema = Loose('Observation', { id: z.string(), userId: z.string(), category: z.string(), content: z.string() });
const RecalledItemSchema = Loose('RecalledItem', { id: z.string(), kind: z.string(), text: z.string(), relevance: z.number(), signals: z.record(z.string(), z.unknown()) });
export const MemoryBundleSchema = Loose('MemoryBundle', {
  query: z.string(),
  userId: z.string(),
  turns: z.array(loose({ turn: TurnSchema, score: z.number(), signals: z.record(z.string(), z.unknown()) })),
  facts: z.array(RecalledItemSchema),
  entities: z.array(RecalledItemSchema),
  strategies: z.array(RecalledItemSchema),
  goals: z.array(RecalledItemSchema),
  pools: z.array(RecalledItemSchema).describe('entries of the memory pools the calling agent may read, each with data.poolId and data.poolName'),
  profile: z.record(z.string(), z.unknown()).nullable(),
  degraded: z.array(z.string()),
  timings: z.record(z.string(), z.number()),
  skipped: z.string().optional().describe('set when recall did not run, and why (memory disabled, recall off for this agent)'),
  learnedInfo: z
    .array(z.object({ connectionId: z.string(), info: z.record(z.string(), z.unknown()) }))
    .optional()
    .describe("the active connections' learned info"),
});

// Memory pools (src/pools): outputs described loosely, as the knowledge ones.
const ActorSchema = z.object({ agentId: z.string().nullable(), keyId: z.string().nullable() });
export const MemoryPoolSchema = Loose('MemoryPool', {
  id: z.string(),
  name: z.string(),
  type: z.string(),
  scope: z.string(),
  ownerAgent: z.string().nullable(),
  access: z.object({ read: z.array(z.string()), write: z.array(z.string()), publicRead: z.boolean() }),
  expiresAt: z.string().nullable(),
  createdBy: ActorSchema,
});
export const PoolEntrySchema = Loose('PoolEntry', {
  id: z.string(),
  poolId: z.string(),
  version: z.number().int(),
  kind: z.string(),
  source: z.string(),
  content: z.string(),
  importance: z.number(),
  confidence: z.number(),
  accessCount: z.number().int(),
  userId: z.string().nullable(),
  status: z.string(),
  provenance: loose({ agentId: z.string().nullable(), keyId: z.string().nullable(), mergedFrom: z.array(z.record(z.string(), z.unknown())) }),
  effectiveRelevance: z.number(),
});
export const EntryVersionSchema = Loose('PoolEntryVersion', {
  entryId: z.string(),
  version: z.number().int(),
  content: z.string(),
  change: z.string(),
  changedBy: ActorSchema,
  at: z.string(),
});
export const PoolSnapshotSchema = Loose('PoolSnapshot', { id: z.string(), poolId: z.string(), entryCount: z.number().int(), createdAt: z.string(), createdBy: ActorSchema });
export const PoolStatsSchema = Loose('PoolStats', {
  poolId: z.string(),
  entries: z.number().int(),
  archived: z.number().int(),
  versions: z.number().int(),
  snapshots: z.number().int(),
  accessCount: z.number(),
  byKind: z.record(z.string(), z.number().int()),
});
export const PoolSearchHitSchema = Loose('PoolSearchHit', { entry: PoolEntrySchema, poolId: z.string(), poolName: z.string(), score: z.number(), signals: z.record(z.string(), z.unknown()) });
