import * as z from 'zod';
import { ActiveConnectionsSchema, ChannelSchema, ChannelsSchema, ConnectionIdSchema, IdSchema, TimestampSchema, UserIdSchema } from '../schemas';

/*
 * The wire contract of semantic memory: zod only (the HTTP client bundles it for browsers).
 */

// ---------------------------------------------------------------------------------------
// Shared field schemas

/** Turn ids are `<conversationId>:<index>` (see episodic `turnId`). */
export const TurnIdSchema = z
  .string()
  .max(150)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.@-]*:\d+$/, 'must be a turn id "<conversationId>:<index>"');

const Iso = TimestampSchema;
const Confidence = z.number().min(0).max(1);
const PropertyValue = z.union([z.string().max(2_000), z.number(), z.boolean()]);
/** Small scalar maps stored as JSON on nodes and relationships. */
export const PropertiesSchema = z.record(z.string().min(1).max(100), PropertyValue).refine((m) => Object.keys(m).length <= 50, 'at most 50 properties');
const EmbeddingSchema = z.array(z.number()).min(1).max(8192);

/**
 * Entity types. Lower-case words; the listed ones are what the extractors produce, others
 * are accepted. `other` means "type unknown": it matches any type during resolution.
 */
export const KNOWN_ENTITY_TYPES = ['person', 'place', 'organization', 'project', 'product', 'tool', 'concept', 'event', 'other'] as const;
export const EntityTypeSchema = z
  .string()
  .min(1)
  .max(40)
  .regex(/^[a-z][a-z0-9_]*$/, 'must be a lower-case word such as person, place, organization, project, concept, other')
  .default('other');

/** When a fact holds relative to when it was said. */
export const TemporalTagSchema = z.enum(['current', 'past', 'future']);
export type TemporalTag = z.output<typeof TemporalTagSchema>;

/** Calibrated certainty labels (explicit 0.95, implied 0.85, inferred 0.70, uncertain 0.50). */
export const CertaintySchema = z.enum(['explicit', 'implied', 'inferred', 'uncertain']);
export type Certainty = z.output<typeof CertaintySchema>;
export const CERTAINTY_CONFIDENCE: Readonly<Record<Certainty, number>> = { explicit: 0.95, implied: 0.85, inferred: 0.7, uncertain: 0.5 };

/** Fact predicates ("works_at", "lives_in", "likes"): lower snake case. */
export const PredicateSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-z][a-z0-9_]*$/, 'must be lower_snake_case, e.g. works_at');

/** The seven typed relationships of the spec. Custom ones are any other UPPER_SNAKE name. */
export const STANDARD_RELATIONSHIP_TYPES = ['RELATED_TO', 'PART_OF', 'LOCATED_IN', 'WORKS_FOR', 'KNOWS', 'CREATED_BY', 'REFERENCES'] as const;
/** Structural relationship names that entity-to-entity relationships may not use. */
export const RESERVED_RELATIONSHIP_TYPES = [
  'ABOUT',
  'DERIVED_FROM',
  'SUPERSEDES',
  'PROMOTED_FROM',
  'CONTRADICTS',
  'HAS_ENTITY',
  'HAS_FACT',
  'HAS_GOAL',
  'HAS_CONVERSATION',
  'HAS_TURN',
  'FOLLOWED_BY',
  'MENTIONS',
  'SUBGOAL_OF',
  'BLOCKED_BY',
  'USES_TOOL',
  'SUCCEEDED_IN',
  'FAILED_IN',
  'USED_TOOL',
  'INVOKED',
] as const;
/**
 * A relationship type: UPPER_SNAKE_CASE, 2-50 characters, not a reserved structural name.
 * Only a name that passed this schema ever reaches Cypher (as a dynamic type parameter).
 */
export const RelationshipTypeSchema = z
  .string()
  .regex(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/, 'must be UPPER_SNAKE_CASE, e.g. WORKS_FOR')
  .min(2)
  .max(50)
  .refine((t) => !(RESERVED_RELATIONSHIP_TYPES as readonly string[]).includes(t), 'is a reserved structural relationship name');

// ---------------------------------------------------------------------------------------
// Facade input schemas (validated by AgentMemory)

export const EntityInputSchema = z
  .object({
    userId: UserIdSchema,
    channel: ChannelSchema,
    /** Canonical display name ("Vitaly Petrov"). */
    name: z.string().trim().min(1).max(200),
    type: EntityTypeSchema,
    /** Other names for the same thing ("Vitya", "my boss"); merged into the stored list. */
    aliases: z.array(z.string().trim().min(1).max(200)).max(50).default([]),
    description: z.string().max(5_000).optional(),
    properties: PropertiesSchema.optional(),
    salience: Confidence.optional(),
    /** Update exactly this entity (must be the caller's) instead of resolving by name. */
    entityId: IdSchema.optional(),
    /** Precomputed embedding (skips the embedder); must have the embedder's dimension. */
    embedding: EmbeddingSchema.optional(),
    /** The turn that mentioned it; `(:Conversation)-[:MENTIONS]->(:Entity)` is added for its conversation. */
    sourceTurnId: TurnIdSchema.optional(),
  })
  .strict();
export type EntityInput = z.input<typeof EntityInputSchema>;

export const FactInputSchema = z
  .object({
    userId: UserIdSchema,
    channel: ChannelSchema,
    /** Caller-chosen id makes the write idempotent (a repeat returns the stored fact, `created: false`). */
    id: IdSchema.optional(),
    claim: z.string().trim().min(1).max(5_000),
    /** Defaults from `certainty` when given, else 0.95 (stated explicitly). */
    confidence: Confidence.optional(),
    certainty: CertaintySchema.optional(),
    /** Who asserted it: "user", "agent", "extraction:rules", "extraction:openai", ... */
    source: z.string().min(1).max(100).default('user'),
    /** Provenance; each turn must be the caller's. The first is `source_turn_id`. */
    sourceTurnId: TurnIdSchema.optional(),
    sourceTurnIds: z.array(TurnIdSchema).max(100).optional(),
    temporal: TemporalTagSchema.default('current'),
    validFrom: Iso.optional(),
    validTo: Iso.optional(),
    /** Entities the fact is about (`ABOUT`); each must be the caller's. */
    aboutEntityIds: z.array(IdSchema).max(20).default([]),
    /** What the claim says about its entity ("works_at"); only facts with the same entity and predicate can retire each other. */
    predicate: PredicateSchema.optional(),
    /** Facts this one replaces (closed and linked with SUPERSEDES, in the same transaction). */
    supersedes: z.array(IdSchema).max(20).default([]),
    /** Facts this one conflicts with but does not retire (`CONTRADICTS`, for review). */
    contradicts: z.array(IdSchema).max(20).default([]),
    needsReview: z.boolean().default(false),
    salience: Confidence.optional(),
    properties: PropertiesSchema.optional(),
    /** Scopes the fact to one tool connection: recall returns it only while that connection is active. */
    connectionId: ConnectionIdSchema.optional(),
    embedding: EmbeddingSchema.optional(),
  })
  .strict()
  .refine((f) => !f.validFrom || !f.validTo || f.validFrom <= f.validTo, 'validFrom must not be after validTo');
export type FactInput = z.input<typeof FactInputSchema>;

export const RelationshipInputSchema = z
  .object({
    userId: UserIdSchema,
    channel: ChannelSchema,
    sourceId: IdSchema,
    targetId: IdSchema,
    type: RelationshipTypeSchema,
    confidence: Confidence.default(0.9),
    properties: PropertiesSchema.optional(),
    validFrom: Iso.optional(),
    validTo: Iso.optional(),
    sourceTurnId: TurnIdSchema.optional(),
    /**
     * Close every other open relationship of this type from the source first (for
     * single-valued relations: a new employer ends the old WORKS_FOR, keeping history).
     */
    replaceExisting: z.boolean().default(false),
  })
  .strict();
export type RelationshipInput = z.input<typeof RelationshipInputSchema>;

export const CorrectFactInputSchema = z
  .object({
    userId: UserIdSchema,
    factId: IdSchema,
    claim: z.string().trim().min(1).max(5_000),
    confidence: Confidence.optional(),
    source: z.string().min(1).max(100).default('correction'),
    sourceTurnId: TurnIdSchema.optional(),
    reason: z.string().max(1_000).optional(),
    embedding: EmbeddingSchema.optional(),
  })
  .strict();
export type CorrectFactInput = z.input<typeof CorrectFactInputSchema>;

export const PromoteInputSchema = z
  .object({
    userId: UserIdSchema,
    factId: IdSchema,
    reason: z.string().min(1).max(1_000),
    /** Overrides the configured thresholds for this call (recorded in the audit row). */
    thresholds: z
      .object({ minConfidence: Confidence, minAccessCount: z.number().int().min(0), minConversations: z.number().int().min(0) })
      .strict()
      .optional(),
    /** Promote even below the thresholds (an explicit user/agent decision); still audited with them. */
    force: z.boolean().default(false),
  })
  .strict();
export type PromoteInput = z.input<typeof PromoteInputSchema>;

// ---------------------------------------------------------------------------------------
// Query schemas (validated by SemanticMemory)

const QueryText = z.string().trim().min(1).max(10_000);
const QueryEmbedding = z.array(z.number()).min(1).max(8192);

export const FactSearchSchema = z
  .object({
    userId: UserIdSchema,
    channels: ChannelsSchema,
    query: QueryText.optional(),
    queryEmbedding: QueryEmbedding.optional(),
    topK: z.number().int().min(1).max(200).default(10),
    minConfidence: z.number().min(0).max(1).default(0),
    includeInactive: z.boolean().default(false),
    /** Active tool connections: facts of other connections are left out (absent: no connection scoping). */
    activeConnections: ActiveConnectionsSchema.optional(),
  })
  .strict()
  .refine((q) => (q.query === undefined) !== (q.queryEmbedding === undefined), 'give exactly one of query or queryEmbedding');
export type FactSearch = z.input<typeof FactSearchSchema>;

export const EntitySearchSchema = z
  .object({
    userId: UserIdSchema,
    channels: ChannelsSchema,
    query: QueryText.optional(),
    queryEmbedding: QueryEmbedding.optional(),
    topK: z.number().int().min(1).max(200).default(10),
    types: z.array(EntityTypeSchema).max(20).optional(),
  })
  .strict()
  .refine((q) => (q.query === undefined) !== (q.queryEmbedding === undefined), 'give exactly one of query or queryEmbedding');
export type EntitySearch = z.input<typeof EntitySearchSchema>;

export const FactListSchema = z
  .object({
    userId: UserIdSchema,
    channels: ChannelsSchema,
    entityId: IdSchema.optional(),
    predicate: PredicateSchema.optional(),
    minConfidence: z.number().min(0).max(1).default(0),
    includeInactive: z.boolean().default(false),
    limit: z.number().int().min(1).max(1000).default(100),
    /** Active tool connections: facts of other connections are left out (absent: no connection scoping). */
    activeConnections: ActiveConnectionsSchema.optional(),
  })
  .strict();
export type FactList = z.input<typeof FactListSchema>;

export const EntityGraphQuerySchema = z
  .object({
    userId: UserIdSchema,
    entityIds: z.array(IdSchema).min(1).max(50),
    depth: z.number().int().min(1).max(3).default(1),
    channels: ChannelsSchema,
    limit: z.number().int().min(1).max(500).default(100),
    /** Active tool connections: facts of other connections are left out (absent: no connection scoping). */
    activeConnections: ActiveConnectionsSchema.optional(),
  })
  .strict();
export type EntityGraphQuery = z.input<typeof EntityGraphQuerySchema>;

export const TimelineQuerySchema = z.object({ userId: UserIdSchema, entityId: IdSchema, limit: z.number().int().min(1).max(1000).default(200) }).strict();
export type TimelineQuery = z.input<typeof TimelineQuerySchema>;

export const EndRelationshipSchema = z.object({ userId: UserIdSchema, sourceId: IdSchema, type: RelationshipTypeSchema, targetId: IdSchema }).strict();
export type EndRelationshipInput = z.input<typeof EndRelationshipSchema>;

export const FindEntitiesSchema = z.object({ userId: UserIdSchema, name: z.string().trim().min(1).max(200), channels: ChannelsSchema }).strict();
export type FindEntitiesQuery = z.input<typeof FindEntitiesSchema>;

export const RecordAccessSchema = z.object({ userId: UserIdSchema, factIds: z.array(IdSchema).max(500).default([]), entityIds: z.array(IdSchema).max(500).default([]) }).strict();
export type RecordAccessInput = z.input<typeof RecordAccessSchema>;

export const EntityRefSchema = z.object({ userId: UserIdSchema, entityId: IdSchema }).strict();
export const FactRefSchema = z.object({ userId: UserIdSchema, factId: IdSchema }).strict();
export const RetractFactSchema = z.object({ userId: UserIdSchema, factId: IdSchema, reason: z.string().max(1_000).optional() }).strict();
