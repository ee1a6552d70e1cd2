import * as z from 'zod';
import { ChannelSchema, IdSchema, UserIdSchema } from '../schemas';

/** One working-memory session (zod only: part of the wire contract). */
export const SessionSchema = z.object({ userId: UserIdSchema, channel: ChannelSchema, conversationId: IdSchema }).strict();

/** A context value's key in working memory. */
export const ContextKeySchema = z.string().min(1).max(200);
/** A context value's lifetime (at most 30 days; default the working-memory TTL). */
export const ContextTtlSchema = z
  .number()
  .int()
  .positive()
  .max(30 * 86400);
