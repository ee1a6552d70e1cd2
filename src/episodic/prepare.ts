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

const NUMBER_WORDS = 'a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple of|several|\\d+';
const WEEKDAYS = 'monday|tuesday|wednesday|thursday|friday|saturday|sunday';
/**
 * Words that place what a turn says in time: "yesterday", "last week", "two years ago",
 * "in May", "2022", a weekday or a month. A "when" question is usually answered by a turn
 * that says one ("I went to the support group yesterday"). Written in the common subset of
 * JavaScript and Java regular expressions, as Neo4j evaluates it too (TIME_MENTION_CYPHER).
 */
export const TIME_MENTION =
  'yesterday|today|tonight|tomorrow|ago|recently|lately|the other day|weekend|' +
  `(?:last|next|this|past|coming|that) (?:night|morning|afternoon|evening|week|month|year|summer|winter|spring|fall|autumn|${WEEKDAYS})|` +
  `(?:${NUMBER_WORDS}) (?:days?|weeks?|months?|years?)|${WEEKDAYS}|` +
  'january|february|march|april|june|july|august|september|october|november|december|(?:in|since|early|late|mid) may|may \\d|(?:19|20)\\d\\d';

/** TIME_MENTION for Cypher's `=~`, which must match the whole string (`dated` of turns stored before it was kept). */
export const TIME_MENTION_CYPHER = `(?is).*\\b(?:${TIME_MENTION})\\b.*`;
const SAYS_WHEN = new RegExp(`\\b(?:${TIME_MENTION})\\b`, 'i');

/**
 * What recall asks of every hit, worked out once when the turn is stored (`dated`, `asks`):
 * whether it places something in time (TIME_MENTION) and whether it asks a question (so
 * its reply holds the answer). Evaluating them per hit read each hit's content.
 */
export function turnFlags(content: string): { dated: boolean; asks: boolean } {
  return { dated: SAYS_WHEN.test(content), asks: content.trim().endsWith('?') };
}
