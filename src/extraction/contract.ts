import { MnemographError } from '../errors';
import type { LlmUsage } from '../llm';

/**
 * The extraction pipeline turns a window of conversation turns (or queued observations)
 * into entities, facts and relationships in ONE call per window. Extractors are pure
 * producers: they never write; the consolidation job applies their result to the
 * semantic store (see `src/worker/jobs/consolidate.ts`).
 */

/** How sure the source is, as the LLM (or a rule) labels it; mapped to a number by `calibrate`. */
export type Certainty = 'explicit' | 'implied' | 'inferred' | 'uncertain';
/** When a fact holds relative to the turn that states it. */
export type TemporalTag = 'current' | 'past' | 'future';
export type Polarity = 'positive' | 'negative';
export type EntityType = 'person' | 'place' | 'organization' | 'project' | 'tool' | 'concept' | 'event' | 'other';

/** One turn as the extractor sees it (a stored Turn, or an observation dressed as one). */
export interface ExtractionTurn {
  /** Turn id, or `observation:<id>` for an observation; facts cite it as their source. */
  id: string;
  role: 'user' | 'assistant' | 'system' | 'tool';
  content: string;
  /** ISO instant; anchors relative dates ("last year") and validity windows. */
  timestamp: string;
  /** Who spoke, when known (turn metadata `speaker`); first-person facts are about them. */
  speaker?: string;
}

export interface ExtractionWindow {
  userId: string;
  channel: string;
  conversationId?: string;
  /** Name of the person "I" refers to in user turns (default: the turn's speaker, else "user"). */
  userName?: string;
  turns: ExtractionTurn[];
}

export interface ExtractedEntity {
  name: string;
  type: EntityType;
  aliases: string[];
  description?: string;
}

export interface ExtractedFact {
  /** A self-contained sentence ("Alice works at Acme"). */
  claim: string;
  /** Name of the entity the fact is about (resolved by the semantic store). */
  subject: string;
  /** snake_case predicate, e.g. works_at, lives_in, likes, sister. Contradictions compare (subject, relation). */
  relation: string;
  /** The value: an entity name or a literal ("Acme", "coffee", "34"). */
  object?: string;
  polarity: Polarity;
  /** True for relations that hold one value at a time (works_at, lives_in): a different value contradicts. */
  singleValued: boolean;
  certainty: Certainty;
  /** Calibrated number for `certainty` (see `calibrate`). */
  confidence: number;
  temporal: TemporalTag;
  /** The user corrected an earlier statement ("actually...", "no, I meant..."): supersedes, whatever the policy. */
  isCorrection: boolean;
  /**
   * The statement ends a state ("I quit", "I left Feedzai", "no longer", "sold", "broke up"):
   * the fact itself is past, and applying it closes the subject's current fact of the relation
   * with this object (every current value of the relation when there is no object), whatever
   * the contradiction policy. Absent means false.
   */
  ends?: boolean;
  /** Turn the fact came from (a window turn id). */
  sourceTurnId: string;
  validFrom?: string;
  validTo?: string;
}

export interface ExtractedRelationship {
  source: string;
  target: string;
  /** One of RELATED_TO, PART_OF, LOCATED_IN, WORKS_FOR, KNOWS, CREATED_BY, REFERENCES, or a custom UPPER_SNAKE type. */
  type: string;
  properties: Record<string, string | number | boolean>;
  sourceTurnId?: string;
}

/** Tokens and money spent on one extraction call (zero for the rules extractor). */
/** What one extraction cost. */
export type ExtractionUsage = LlmUsage;

export interface ExtractionResult {
  entities: ExtractedEntity[];
  facts: ExtractedFact[];
  relationships: ExtractedRelationship[];
  usage: ExtractionUsage;
  /** What the repair step had to fix (stripped <think>, code fence, unwrapped strings...). */
  repairs: string[];
}

export interface Extractor {
  readonly provider: 'rules' | 'openai' | 'anthropic' | 'openai-compatible';
  readonly model: string;
  /**
   * Extracts everything in one call. Resolves with a fully validated result (possibly
   * empty), or rejects with ExtractionRejectedError (the output could not be repaired)
   * or an upstream MnemographError (the API failed). Never resolves with a half-parsed
   * result; callers leave their input queued on rejection.
   */
  extract(window: ExtractionWindow): Promise<ExtractionResult>;
  /** Releases what it holds (a thread); the composition root calls it once, when it closes. */
  close?(): Promise<void>;
}

/** Receives the usage of every LLM call (persisted to `llm_usage` by the composition root). */
export type { UsageSink } from '../llm';

/** LLM output that could not be repaired into a valid extraction; `reason` says why. */
export class ExtractionRejectedError extends MnemographError {
  constructor(
    readonly reason: string,
    details: Record<string, unknown> = {},
  ) {
    super('EXTRACTION_REJECTED', 'upstream', `extraction output rejected: ${reason}; the input stays queued and is retried on the next run`, { reason, ...details });
  }
}

export type ContradictionPolicy = 'prefer_new' | 'prefer_old' | 'flag_review';
