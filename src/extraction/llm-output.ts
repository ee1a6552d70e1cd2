import { z } from 'zod';
import { calibrate, certaintyFromNumber } from './calibration';
import { ExtractionRejectedError, type EntityType, type ExtractedEntity, type ExtractedFact, type ExtractedRelationship, type ExtractionTurn } from './contract';

/**
 * Parsing and repair of what an LLM answered. Repairs are the ones models actually need
 * (a `<think>` preamble, a markdown fence, prose around the JSON, stringified nested JSON,
 * "true"/"0.9" strings, a number instead of a certainty label); anything else is rejected
 * whole, with the reason, so nothing half-parsed is ever stored.
 */

const ENTITY_TYPES = ['person', 'place', 'organization', 'project', 'tool', 'concept', 'event', 'other'] as const;
const ENTITY_TYPE_ALIASES: Record<string, EntityType> = {
  org: 'organization',
  company: 'organization',
  location: 'place',
  city: 'place',
  country: 'place',
  people: 'person',
  human: 'person',
};

const Str = z.string().trim().min(1).max(2_000);
const Bool = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);
const Certainty = z.union([
  z.enum(['explicit', 'implied', 'inferred', 'uncertain']),
  z.number().min(0).max(100).transform(certaintyFromNumber),
  z
    .string()
    .regex(/^\d*\.?\d+$/)
    .transform((v) => certaintyFromNumber(Number(v))),
]);
const EntityTypeSchema = z
  .string()
  .trim()
  .toLowerCase()
  .transform((t): EntityType => ((ENTITY_TYPES as readonly string[]).includes(t) ? (t as EntityType) : (ENTITY_TYPE_ALIASES[t] ?? 'other')));
const IsoDate = z
  .string()
  .trim()
  .refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO date')
  .transform((s) => new Date(s).toISOString());
const Scalar = z.union([z.string().max(2_000), z.number(), z.boolean()]);

export const LlmEntitySchema = z.object({
  name: Str.max(200),
  type: EntityTypeSchema.default('other'),
  aliases: z.union([z.array(Str.max(200)), Str.max(200).transform((a) => [a])]).default([]),
  description: z.string().max(2_000).nullish(),
});

export const LlmFactSchema = z.object({
  claim: Str,
  subject: Str.max(200),
  // Predicates are lower_snake_case starting with a letter (the semantic store's rule).
  relation: Str.max(100).transform((r) => {
    const s = r
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '');
    return s === '' ? 'related_to' : /^[a-z]/.test(s) ? s : `rel_${s}`.slice(0, 100);
  }),
  object: z.union([z.string().max(500), z.number().transform(String)]).nullish(),
  polarity: z.enum(['positive', 'negative']).default('positive'),
  single_valued: Bool.default(false),
  certainty: Certainty.default('inferred'),
  temporal: z.enum(['current', 'past', 'future']).default('current'),
  is_correction: Bool.default(false),
  ends: Bool.default(false),
  source_turn: z.union([z.string(), z.number()]).nullish(),
  valid_from: IsoDate.nullish(),
  valid_to: IsoDate.nullish(),
});

export const LlmRelationshipSchema = z.object({
  source: Str.max(200),
  target: Str.max(200),
  type: Str.max(60).transform((t) =>
    t
      .toUpperCase()
      .replace(/[^A-Z0-9]+/g, '_')
      .replace(/^_|_$/g, ''),
  ),
  // A map, or the [{key, value}] pairs of the structured-output schema (strict JSON Schema has no free-form maps).
  properties: z
    .union([z.record(z.string(), Scalar), z.array(z.object({ key: Str.max(100), value: Scalar })).transform((pairs) => Object.fromEntries(pairs.map((p) => [p.key, p.value] as const)))])
    .default({}),
  source_turn: z.union([z.string(), z.number()]).nullish(),
});

/** The one JSON object every LLM provider is asked to return. */
export const LlmExtractionSchema = z.object({
  entities: z.array(LlmEntitySchema).max(200).default([]),
  facts: z.array(LlmFactSchema).max(200).default([]),
  relationships: z.array(LlmRelationshipSchema).max(200).default([]),
});
export type LlmExtraction = z.output<typeof LlmExtractionSchema>;

/**
 * What the providers are asked for through structured output: the same fields, in the strict
 * subset of JSON Schema OpenAI's `strict: true` accepts (every property required, nullable
 * instead of optional, no free-form maps: relationship properties as key/value pairs, no
 * defaults). Anything it admits is valid input for `LlmExtractionSchema`, which validates the
 * answer either way (a unit test holds the two together).
 */
const described = (d: string) => z.string().describe(d);
export const LlmExtractionWireSchema = z.object({
  entities: z.array(
    z.object({
      name: described('the name as said'),
      type: z.enum(ENTITY_TYPES),
      aliases: z.array(z.string()).describe('other names for the same entity ("my boss")'),
      description: z.string().nullable(),
    }),
  ),
  facts: z.array(
    z.object({
      claim: described('a self-contained sentence ("Dana works at Revolut")'),
      subject: described("the entity the fact is about; the speaker's name for first-person statements"),
      relation: described('a short snake_case predicate: works_at, lives_in, likes, allergic_to, sister...'),
      object: z.string().nullable().describe('the value; null when a change of state ends every value ("I quit my job")'),
      polarity: z.enum(['positive', 'negative']),
      single_valued: z.boolean().describe('the subject has one value at a time (works_at, lives_in, age)'),
      certainty: z.enum(['explicit', 'implied', 'inferred', 'uncertain']),
      temporal: z.enum(['current', 'past', 'future']),
      is_correction: z.boolean().describe('the speaker corrects something said earlier ("actually", "I meant")'),
      ends: z.boolean().describe('the statement ends a state (quit, left, no longer, sold, broke up, moved away); temporal is then past'),
      source_turn: z.string().nullable().describe('the turn it comes from, as T<n>'),
      valid_from: z.string().nullable().describe('ISO date it started holding, or null'),
      valid_to: z.string().nullable().describe('ISO date it stopped holding, or null'),
    }),
  ),
  relationships: z.array(
    z.object({
      source: described('entity name'),
      target: described('entity name'),
      type: described('RELATED_TO, PART_OF, LOCATED_IN, WORKS_FOR, KNOWS, CREATED_BY, REFERENCES or a custom UPPER_SNAKE type'),
      properties: z.array(z.object({ key: z.string(), value: z.string() })),
      source_turn: z.string().nullable(),
    }),
  ),
});

/** The wire schema as JSON Schema, given to providers as structured output (see `LlmExtractor`). */
export const LLM_EXTRACTION_JSON_SCHEMA: Record<string, unknown> = (() => {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(LlmExtractionWireSchema) as Record<string, unknown>;
  return schema;
})();

/**
 * LLMs sometimes return nested values as JSON strings (`{"aliases": "[\"Al\"]"}`). Walks
 * the value and unwraps any string that parses to an object or array, recursively.
 */
export function normalizeJsonValues(value: unknown, depth = 0): unknown {
  if (depth > 20) return value;
  if (typeof value === 'string') {
    const s = value.trim();
    if ((s.startsWith('{') && s.endsWith('}')) || (s.startsWith('[') && s.endsWith(']'))) {
      try {
        return normalizeJsonValues(JSON.parse(s), depth + 1);
      } catch {
        return value;
      }
    }
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => normalizeJsonValues(v, depth + 1));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalizeJsonValues(v, depth + 1)]));
  }
  return value;
}

/**
 * Finds the JSON object in raw model text. Strips `<think>…</think>` (and an unterminated
 * one), markdown fences, and prose before the first `{` / after the last `}`.
 */
export function extractJsonText(raw: string, repairs: string[]): string {
  let text = raw;
  if (/<think>/i.test(text)) {
    const closed = text.replace(/<think>[\s\S]*?<\/think>/gi, '');
    if (/<think>/i.test(closed)) throw new ExtractionRejectedError('the answer is an unterminated <think> block with no JSON after it');
    text = closed;
    repairs.push('stripped <think> block');
  }
  const fence = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fence) {
    text = fence[1]!;
    repairs.push('unwrapped markdown code fence');
  }
  text = text.trim();
  if (text === '') throw new ExtractionRejectedError('the model returned an empty answer');
  if (text.startsWith('[')) throw new ExtractionRejectedError('the JSON is a list, not an object with entities, facts and relationships');
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0) throw new ExtractionRejectedError(`the answer contains no JSON object (starts with ${JSON.stringify(text.slice(0, 40))})`);
  if (end < start) throw new ExtractionRejectedError('invalid JSON (truncated: the object is never closed)');
  if (start > 0 || end < text.length - 1) repairs.push('dropped prose around the JSON object');
  return text.slice(start, end + 1);
}

/**
 * Raw model text -> validated extraction, resolving `source_turn` references ("T2", 2, or
 * a turn id) against the window. Throws ExtractionRejectedError naming the first problem.
 */
export function parseLlmExtraction(raw: string, turns: ExtractionTurn[]): { entities: ExtractedEntity[]; facts: ExtractedFact[]; relationships: ExtractedRelationship[]; repairs: string[] } {
  const repairs: string[] = [];
  const jsonText = extractJsonText(raw, repairs);
  let value: unknown;
  try {
    value = JSON.parse(jsonText);
  } catch (err) {
    throw new ExtractionRejectedError(`invalid JSON (${(err as Error).message})`);
  }
  const normalized = normalizeJsonValues(value);
  if (JSON.stringify(normalized) !== JSON.stringify(value)) repairs.push('unwrapped stringified JSON values');
  if (normalized === null || typeof normalized !== 'object' || Array.isArray(normalized)) {
    throw new ExtractionRejectedError('the JSON is not an object with entities, facts and relationships');
  }
  const parsed = LlmExtractionSchema.safeParse(normalized);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ExtractionRejectedError(`wrong types at ${issue.path.join('.') || '(root)'}: ${issue.message}`, {
      issues: parsed.error.issues.slice(0, 10).map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  const out = parsed.data;
  const fallbackTurn = [...turns].reverse().find((t) => t.role === 'user') ?? turns[turns.length - 1];
  if (!fallbackTurn) throw new ExtractionRejectedError('empty window');
  const resolveTurn = (ref: string | number | null | undefined): string => {
    if (ref === null || ref === undefined || ref === '') return fallbackTurn.id;
    const s = String(ref).trim();
    const byId = turns.find((t) => t.id === s);
    if (byId) return byId.id;
    const m = /^T?(\d+)$/i.exec(s);
    const idx = m ? Number(m[1]) : NaN;
    const byIndex = turns[idx];
    if (byIndex) return byIndex.id;
    repairs.push(`unknown source_turn ${JSON.stringify(s)} mapped to the last user turn`);
    return fallbackTurn.id;
  };
  return {
    entities: out.entities.map((e) => ({ name: e.name, type: e.type, aliases: [...new Set(e.aliases.filter((a) => a !== e.name))], description: e.description ?? undefined })),
    facts: out.facts.map((f) => ({
      claim: f.claim,
      subject: f.subject,
      relation: f.relation,
      object: f.object ?? undefined,
      polarity: f.polarity,
      singleValued: f.single_valued,
      certainty: f.certainty,
      confidence: calibrate(f.certainty),
      temporal: f.temporal,
      isCorrection: f.is_correction,
      ...(f.ends ? { ends: true } : {}),
      sourceTurnId: resolveTurn(f.source_turn),
      validFrom: f.valid_from ?? undefined,
      validTo: f.valid_to ?? undefined,
    })),
    relationships: out.relationships
      .filter((r) => r.type !== '')
      .map((r) => ({ source: r.source, target: r.target, type: r.type, properties: r.properties, sourceTurnId: r.source_turn == null ? undefined : resolveTurn(r.source_turn) })),
    repairs,
  };
}
