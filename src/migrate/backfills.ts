import { scopeKey } from '../access';
import { SCOPED_LABELS } from '../infra/fulltext-scope';
import { MAX_SPEAKERS, SPEAKERS_OF_CONVERSATIONS } from '../episodic/neo4j-episodic-store';
import type { CypherRunner } from '../infra/neo4j';

/**
 * Data a Cypher migration needs that Cypher alone cannot compute, by migration version. A
 * backfill runs after its file's statements and before the ledger records the file, so a
 * run interrupted midway repeats it; each one only touches what is still missing.
 */
export type Backfill = (runner: CypherRunner) => Promise<void>;

const TAG = (op: string) => ({ subsystem: 'migrate', op });
const PAIRS_PER_WRITE = 200;

// label -> {userId, channel}: the (user, channel) pairs that still have nodes without a scope_key
const UNSCOPED = (label: string) => `MATCH (n:${label}) WHERE n.scope_key IS NULL AND n.user_id IS NOT NULL AND n.channel IS NOT NULL
RETURN DISTINCT n.user_id AS userId, n.channel AS channel`;
// label, $rows: [{userId, channel, key}] -> nothing (the (user_id, channel) index finds each pair's nodes)
const SET_SCOPE = (label: string) => `UNWIND $rows AS row
MATCH (n:${label}) WHERE n.user_id = row.userId AND n.channel = row.channel AND n.scope_key IS NULL
SET n.scope_key = row.key`;

/** 006: the scope_key the scoped full-text indexes require, on facts, entities and strategies written before it (turns have had one since 003). */
async function scopeKeys(runner: CypherRunner): Promise<void> {
  for (const label of SCOPED_LABELS.filter((l) => l !== 'Turn')) {
    const pairs = await runner.read<{ userId: string; channel: string }>(UNSCOPED(label), {}, TAG('backfill_scope_keys'));
    for (let i = 0; i < pairs.length; i += PAIRS_PER_WRITE) {
      const rows = pairs.slice(i, i + PAIRS_PER_WRITE).map((p) => ({ ...p, key: scopeKey(p.userId, p.channel) }));
      await runner.write(SET_SCOPE(label), { rows }, TAG('backfill_scope_keys'));
    }
  }
}

// -> {n}: up to 500 conversations without a speakers list get one from their turns ([] when none has a speaker)
const SET_SPEAKERS = `MATCH (c:Conversation) WHERE c.speakers IS NULL
WITH c LIMIT 500
OPTIONAL MATCH (c)-[:HAS_TURN]->(t:Turn) WHERE t.speaker IS NOT NULL
WITH c, collect(DISTINCT t.speaker) AS speakers
SET c.speakers = speakers[0..${MAX_SPEAKERS}]
RETURN count(c) AS n`;

/** 007: the speakers list of conversations stored before the write path kept one. */
async function conversationSpeakers(runner: CypherRunner): Promise<void> {
  await untilNone(runner, SET_SPEAKERS, 'backfill_conversation_speakers');
}

/** Runs a batch write returning {n} until a batch touches nothing. */
async function untilNone(runner: CypherRunner, query: string, op: string): Promise<void> {
  for (;;) {
    const [row] = await runner.write<{ n: number }>(query, {}, TAG(op));
    if (!row || Number(row.n) === 0) return;
  }
}

// -> {n}: up to 500 users without a speakers list get one from their conversations' lists ([] when none has one)
const SET_USER_SPEAKERS = `MATCH (u:User) WHERE u.speakers IS NULL
WITH u LIMIT 500
SET u.speakers = ${SPEAKERS_OF_CONVERSATIONS}
RETURN count(u) AS n`;

/** 008: the speakers list of users stored before the write path kept one. */
async function userSpeakers(runner: CypherRunner): Promise<void> {
  await untilNone(runner, SET_USER_SPEAKERS, 'backfill_user_speakers');
}

// -> {n}: up to 500 entities the old cleanup hid (decayed salience) made live again
const RESTORE_DROPPED = `MATCH (e:Entity) WHERE e.dropped_by = 'cleanup'
WITH e LIMIT 500
SET e.valid_to = null
REMOVE e.dropped_by
RETURN count(e) AS n`;

/** 012: entities the cleanup used to hide when their salience decayed (decay now only ranks). */
async function restoreDroppedEntities(runner: CypherRunner): Promise<void> {
  await untilNone(runner, RESTORE_DROPPED, 'backfill_restore_dropped_entities');
}

export const NEO4J_BACKFILLS: Record<number, Backfill> = { 6: scopeKeys, 7: conversationSpeakers, 8: userSpeakers, 12: restoreDroppedEntities };
