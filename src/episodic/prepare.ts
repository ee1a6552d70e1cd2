import { createHash } from 'node:crypto';
import { countTokens } from 'gpt-tokenizer/cjs/encoding/o200k_base';
import type { z } from 'zod';
import type { NewTurn, TurnInputSchema } from './contract';

/** Derived fields of a validated turn: timestamp, token count, hash and keyword text. */
export function prepareTurn(input: z.output<typeof TurnInputSchema>, now: () => Date = () => new Date()): NewTurn {
  const timestamp = input.timestamp ? new Date(input.timestamp).toISOString() : now().toISOString();
  const metadata = input.metadata ?? {};
  return {
    userId: input.userId,
    channel: input.channel,
    conversationId: input.conversationId,
    index: input.index,
    role: input.role,
    content: input.content,
    timestamp,
    tokenCount: countTokens(input.content),
    contentHash: createHash('sha256').update(input.content).digest('hex'),
    model: input.model,
    metadata,
    searchText: searchTextFor(metadata),
  };
}

/**
 * The text a turn is embedded from: its speaker's name, when known, then the content, so a
 * question about a person ("what did Caroline paint?") lands near that person's turns. The
 * same rule in Cypher is TURN_EMBEDDING_TEXT (background embedder, reindex).
 */
export function embeddingText(turn: { content: string; metadata: NewTurn['metadata'] }): string {
  return turn.metadata.speaker ? `${turn.metadata.speaker}: ${turn.content}` : turn.content;
}

/** Extra words indexed with the content so "what did Caroline say" finds Caroline's turns. */
export function searchTextFor(metadata: NewTurn['metadata']): string {
  return [metadata.speaker, metadata.toolName].filter((s): s is string => typeof s === 'string' && s.length > 0).join(' ');
}
