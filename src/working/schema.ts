import { z } from 'zod';
import { ChannelSchema, IdSchema, UserIdSchema } from '../schemas';

/** One working-memory session (zod only: part of the wire contract). */
export const SessionSchema = z.object({ userId: UserIdSchema, channel: ChannelSchema, conversationId: IdSchema }).strict();
