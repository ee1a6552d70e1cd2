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

/** Validates `input` against `schema`, throwing ValidationError that lists each bad field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message }));
  const first = issues[0]!;
  throw new ValidationError(`invalid ${what}: ${first.path} ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`, { issues });
}
