import * as z from 'zod';
import { ValidationError } from './errors';

/**
 * Identifiers shared by every subsystem. They become Redis key segments and Neo4j/Postgres
 * values, so they are restricted to a safe alphabet with no ':' (the key separator).
 */
export const IdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.@-]*$/, 'must be 1-128 characters of letters, digits, _ . @ - (starting with a letter or digit)');
export const UserIdSchema = IdSchema.describe('the user this memory belongs to');
export const ChannelSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^(_global|[A-Za-z0-9][A-Za-z0-9_.-]*)$/, 'must be "_global" or a project name of letters, digits, _ . -')
  .default('_global')
  .describe('memory channel: "_global" (user-wide) or a project name');
export const GLOBAL_CHANNEL = '_global';
/**
 * A tool connection of the user (seed 000 §3.D: a Jira or Gmail connection instance). Facts,
 * observations and turns may carry one; recall with `activeConnections` returns user-level
 * items plus those of the active connections only.
 */
export const ConnectionIdSchema = IdSchema.describe('a tool connection of the user (connection-scoped memory)');
/** The connections active in a request (0-50). */
export const ActiveConnectionsSchema = z.array(ConnectionIdSchema).max(50);

/** The channels a read searches (1-20, default `_global`); readers always add `_global`. */
export const ChannelsSchema = z.array(ChannelSchema).min(1).max(20).default([GLOBAL_CHANNEL]);

/** The most hours back a time window may reach (100 years): `now - hours` stays a date every store can hold. */
export const MAX_WINDOW_HOURS = 24 * 365 * 100;
/** A time window in hours back from now (or from `asOf`), bounded by MAX_WINDOW_HOURS. */
export const WindowHoursSchema = z.number().positive().max(MAX_WINDOW_HOURS);

/** The range of instants both PostgreSQL (timestamptz) and Neo4j (datetime) hold and JavaScript prints as plain ISO: years 1-9999 in UTC. */
const MIN_INSTANT = Date.parse('0001-01-01T00:00:00Z');
const MAX_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');
const OFFSET = /([+-])(\d{2}):?(\d{2})$/;

/**
 * An ISO 8601 instant with an offset that every store can hold: a UTC offset within
 * ±18:00 (what Neo4j and java.time accept) and, once the offset is applied, a year from
 * 1 to 9999 in UTC (`9999-12-31T23:59:59-14:00` is year 10000 in UTC; year 0 is not a
 * PostgreSQL year). Anything else is refused here, before a store is touched.
 */
export const TimestampSchema = z.iso
  .datetime({ offset: true })
  .refine((s) => {
    const m = OFFSET.exec(s);
    return !m || Number(m[2]) * 60 + Number(m[3]) <= 18 * 60;
  }, 'the UTC offset must be within ±18:00')
  .refine((s) => {
    const t = Date.parse(s);
    return Number.isFinite(t) && t >= MIN_INSTANT && t <= MAX_INSTANT;
  }, 'must fall between years 1 and 9999 in UTC');

/** The ISO instant `hours` before `from` (default now), never before year 1 (a window from an early `asOf`). */
export function windowStart(hours: number, from: number = Date.now()): string {
  return new Date(Math.max(MIN_INSTANT, from - hours * 3_600_000)).toISOString();
}

/** How deep a value may nest (objects and arrays); the HTTP API refuses deeper bodies before parsing them. */
export const MAX_DEPTH = 64;

/**
 * Why a value cannot be stored, or undefined when it can: a string (value or key) with a NUL
 * character (PostgreSQL text and jsonb cannot hold one) or a lone UTF-16 surrogate (it would
 * become U+FFFD silently on the way to a store), or nesting deeper than MAX_DEPTH. Iterative,
 * so a deep value cannot overflow the stack; each object is visited once.
 */
export function unstorable(value: unknown): { path: string; message: string } | undefined {
  const stack: Array<{ v: unknown; path: string[]; depth: number }> = [{ v: value, path: [], depth: 0 }];
  const seen = new Set<object>();
  const bad = (s: string): string | undefined => (s.includes('\u0000') ? 'must not contain the NUL character (\\u0000)' : !isWellFormed(s) ? 'must not contain a lone UTF-16 surrogate' : undefined);
  while (stack.length > 0) {
    const { v, path, depth } = stack.pop()!;
    if (typeof v === 'string') {
      const why = bad(v);
      if (why) return { path: path.join('.') || '(root)', message: why };
      continue;
    }
    if (v === null || typeof v !== 'object' || seen.has(v)) continue;
    if (depth >= MAX_DEPTH) return { path: path.join('.') || '(root)', message: `nests deeper than ${MAX_DEPTH} levels` };
    seen.add(v);
    for (const [k, child] of Object.entries(v)) {
      const why = bad(k);
      if (why) return { path: path.join('.') || '(root)', message: `has a key that ${why}` };
      stack.push({ v: child, path: [...path, k], depth: depth + 1 });
    }
  }
  return undefined;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
function isWellFormed(s: string): boolean {
  // String.prototype.isWellFormed (Node 20) where present; the same test by regular expression elsewhere.
  const native = (s as { isWellFormed?: () => boolean }).isWellFormed;
  return native ? native.call(s) : !LONE_SURROGATE.test(s);
}

/**
 * Validates `input` against `schema`, throwing ValidationError that lists each bad field.
 * Every input is first checked for what no store can hold (`unstorable`: NUL, lone
 * surrogates, excessive nesting), whatever its schema says, so no route or batch can
 * reach a store with it.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const unfit = unstorable(input);
  if (unfit) throw new ValidationError(`invalid ${what}: ${unfit.path} ${unfit.message}`, { issues: [unfit] });
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message }));
  const first = issues[0]!;
  throw new ValidationError(`invalid ${what}: ${first.path} ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`, { issues });
}
