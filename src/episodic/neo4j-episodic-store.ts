import { randomUUID } from 'node:crypto';
import type { ManagedTransaction } from 'neo4j-driver';
import { addAccessCountsCypher, type AccessCount } from '../infra/access-count';
import { MAX_OVERFETCH, type CypherRunner } from '../infra/neo4j';
import { heldSearchCypher, OwnerVectors, type HeldFilter, type HeldVectorsOptions, type HoldMode } from '../infra/owner-vectors';
import { indexOrFallback, SmallOwners } from '../infra/vector-scan';
import { forEachSlice } from '../infra/slices';
import { ValidationError } from '../errors';
import { scopeKey, turnId, type AccessScope } from '../access';
import { luceneTerms, scopedLuceneQuery } from '../infra/fulltext-scope';
import { TIME_MENTION_CYPHER, turnFlags } from './prepare';
import type { EpisodicStore, NewTurn, StoreTurnsOptions, TurnFilters, ScoredTurn, SearchTerm, StoreTurnResult, Turn, TurnHit, TurnSearch, TurnWindow } from './contract';

const TAG = (op: string) => ({ subsystem: 'episodic', op });

/** Cypher for the text a turn is embedded from (the rule of `embeddingText` in prepare.ts). */
export function turnEmbeddingText(v: string): string {
  return `CASE WHEN ${v}.speaker IS NULL OR ${v}.speaker = '' THEN ${v}.content ELSE ${v}.speaker + ': ' + ${v}.content END`;
}

/** Distinct speakers kept per conversation (a group chat rarely has more; the list is bounded). */
export const MAX_SPEAKERS = 50;
/** Distinct speakers kept per user, across their conversations (recall's speaker memo reads these). */
export const MAX_USER_SPEAKERS = 200;

/** Projection of a Turn node `t` into the row every read returns (no embedding; `toTurn`). */
export const TURN = `{ id: t.id, userId: t.user_id, channel: t.channel, conversationId: t.conversation_id, index: t.index, role: t.role,
  content: t.content, timestamp: toString(t.timestamp), tokenCount: t.token_count, metadataJson: t.metadata_json,
  embedded: t.embedding IS NOT NULL }`;

/**
 * Cypher expression: the distinct speakers of user `u`'s conversations, from their lists (what
 * the User node's own list holds; migration 008 fills that list with it).
 */
export const SPEAKERS_OF_CONVERSATIONS = `COLLECT {
  MATCH (u)-[:HAS_CONVERSATION]->(c:Conversation) WHERE c.speakers IS NOT NULL
  UNWIND c.speakers AS s
  WITH DISTINCT s LIMIT ${MAX_USER_SPEAKERS}
  RETURN s
}`;

// Cypher, `conv` in scope ({id, userId, channel, startedAt}): creates the conversation when
// missing (and its user), as `c`, and write-locks it for the rest of the transaction (a real
// property change, so Neo4j takes the lock), so concurrent writers of one conversation assign
// indexes in turn.
const UPSERT_CONVERSATION = `
MERGE (c:Conversation {id: conv.id})
  ON CREATE SET c.user_id = conv.userId, c.channel = conv.channel, c.started_at = datetime(conv.startedAt),
                c.turn_count = 0, c.archived = false, c.patterns_extracted = false
SET c.write_seq = coalesce(c.write_seq, 0) + 1, c.archived = false
WITH c, conv
CALL (c, conv) {
  WITH c, conv WHERE c.user_id = conv.userId
  MERGE (u:User {id: conv.userId})
  MERGE (u)-[:HAS_CONVERSATION]->(c)
  // The user's speakers list (CREATE_TURNS adds to it) starts from its conversations' lists:
  // [] for a new user, the old speakers for one imported without the list.
  WITH u WHERE u.speakers IS NULL
  SET u.speakers = ${SPEAKERS_OF_CONVERSATIONS}
}`;

// $conversations: [{id, userId, channel, startedAt}] -> {id, userId, channel, turnCount}.
// Numbers arrive as floats from JS: toInteger.
const UPSERT_CONVERSATIONS = `
UNWIND $conversations AS conv
${UPSERT_CONVERSATION}
RETURN c.id AS id, c.user_id AS userId, c.channel AS channel, toInteger(c.turn_count) AS turnCount`;

// $rows: [{id, conversationId, userId, channel, index, role, content, searchText, timestamp, tokenCount,
//          contentHash, model, metadataJson, source, sessionId, connectionId, contextType, toolName, speaker, scopeKey,
//          dated, asks, embedding, writeId}]
// -> {turn, created}: the stored turn and whether this call created it. `writeId` is one per row
// of one call: a driver retry after a commit whose acknowledgement was lost finds the turn its
// own first attempt wrote and still reports it created, so the caller completes the rest (row,
// working memory, audit) exactly once; another call's repeat (or a duplicate row) is not created.
// CREATE_TURN is one row's part, with `c` (the turn's conversation) and `row` in scope.
const CREATE_TURN = `
MERGE (t:Turn {id: row.id})
  ON CREATE SET t.user_id = row.userId, t.channel = row.channel, t.conversation_id = row.conversationId, t.index = toInteger(row.index),
                t.role = row.role, t.content = row.content, t.search_text = row.searchText, t.timestamp = datetime(row.timestamp),
                t.token_count = toInteger(row.tokenCount), t.content_hash = row.contentHash, t.model = row.model,
                t.metadata_json = row.metadataJson, t.source = row.source, t.session_id = row.sessionId,
                t.connection_id = row.connectionId, t.context_type = row.contextType, t.tool_name = row.toolName,
                t.speaker = row.speaker, t.scope_key = row.scopeKey, t.dated = row.dated, t.asks = row.asks, t.archived = false, t.access_count = 0,
                t.embedding_pending = CASE WHEN row.embedding IS NULL THEN true ELSE null END, t.write_id = row.writeId, t.created_now = true
WITH c, t, row, coalesce(t.created_now, false) AS created
REMOVE t.created_now
WITH c, t, row, created
CALL (c, t, row, created) {
  WITH c, t, row WHERE created
  // Only a speaker new to the conversation can be new to the user (every conversation's
  // speakers are on the user's list), so only then is the user looked at.
  WITH c, t, row, row.speaker IS NOT NULL AND NOT row.speaker IN coalesce(c.speakers, []) AS newSpeaker
  MERGE (c)-[:HAS_TURN]->(t)
  SET c.turn_count = CASE WHEN c.turn_count > t.index THEN c.turn_count ELSE t.index + 1 END,
      c.last_turn_at = CASE WHEN c.last_turn_at IS NULL OR c.last_turn_at < t.timestamp THEN t.timestamp ELSE c.last_turn_at END,
      c.speakers = CASE WHEN row.speaker IS NULL OR row.speaker IN coalesce(c.speakers, []) OR size(coalesce(c.speakers, [])) >= ${MAX_SPEAKERS}
                        THEN c.speakers ELSE coalesce(c.speakers, []) + row.speaker END
  WITH t, row, newSpeaker
  // A speaker new to the user joins the user's list. The user is write-locked before the list
  // is read again, so writers adding different speakers at once all land (the MERGE of
  // HAS_CONVERSATION seems to lock the user already; this does not depend on it).
  CALL (row, newSpeaker) {
    WITH row WHERE newSpeaker
    MATCH (u:User {id: row.userId})
    WITH u, row WHERE NOT row.speaker IN coalesce(u.speakers, [])
    SET u.speakers_lock = true
    REMOVE u.speakers_lock
    WITH u, row WHERE NOT row.speaker IN coalesce(u.speakers, []) AND size(coalesce(u.speakers, [])) < ${MAX_USER_SPEAKERS}
    SET u.speakers = coalesce(u.speakers, []) + row.speaker
  }
  OPTIONAL MATCH (prev:Turn {id: row.conversationId + ':' + toString(t.index - 1)})
  OPTIONAL MATCH (next:Turn {id: row.conversationId + ':' + toString(t.index + 1)})
  FOREACH (p IN CASE WHEN prev IS NULL THEN [] ELSE [prev] END | MERGE (p)-[:FOLLOWED_BY]->(t))
  FOREACH (n IN CASE WHEN next IS NULL THEN [] ELSE [next] END | MERGE (t)-[:FOLLOWED_BY]->(n))
  WITH t, row WHERE row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(t, 'embedding', row.embedding)
  SET t.embedded_at = timestamp()
}
RETURN ${TURN} AS turn, created OR t.write_id = row.writeId AS created`;

const CREATE_TURNS = `
UNWIND $rows AS row
MATCH (c:Conversation {id: row.conversationId})
${CREATE_TURN}`;

// $conversation, $row (a CREATE_TURNS row whose index may be null: the conversation's next)
// -> {turn, created}, no row when the conversation is another user's or channel's: storeTurn's
// conversation and turn in one statement (one round trip fewer than UPSERT_CONVERSATIONS then
// CREATE_TURNS).
const STORE_TURN = `
WITH $conversation AS conv
${UPSERT_CONVERSATION}
WITH c, conv WHERE c.user_id = conv.userId AND c.channel = conv.channel
WITH c, $row AS asked, toInteger(coalesce($row.index, c.turn_count)) AS index
WITH c, asked { .*, index: index, id: asked.conversationId + ':' + toString(index) } AS row
${CREATE_TURN}`;

// $userId -> {speakers}: the user's speakers, kept on the User node as turns are written: one
// seek, where reading every conversation's list took 30-50 ms warm and ~300 ms cold for a user
// with 10,000 conversations. A user without the list (imported from an export made before it
// was kept, until its next write; migration 008 gave the others theirs) is read the old way
// (coalesce: only then).
const SPEAKERS = `MATCH (u:User {id: $userId}) RETURN coalesce(u.speakers, ${SPEAKERS_OF_CONVERSATIONS}) AS speakers`;

// $userId, $conversationId -> {turn} in index order
const GET_CONVERSATION = `
MATCH (c:Conversation {id: $conversationId}) USING INDEX SEEK c:Conversation(id) WHERE c.user_id = $userId
MATCH (c)-[:HAS_TURN]->(t:Turn)
RETURN ${TURN} AS turn ORDER BY t.index`;

// $userId, $channels, $since, $until, $limit -> {turn} newest first
const RECENT_TURNS = `
MATCH (t:Turn) WHERE t.user_id = $userId AND t.timestamp >= datetime($since) AND t.timestamp <= datetime($until)
  AND t.channel IN $channels
RETURN ${TURN} AS turn ORDER BY t.timestamp DESC, t.index DESC LIMIT toInteger($limit)`;

// Turn `t` matches recall's exact-match metadata filters $source, $sessionId, $connectionId,
// $contextType (null = any; see turnFilterParams).
const TURN_METADATA_MATCH = `($source IS NULL OR t.source = $source) AND ($sessionId IS NULL OR t.session_id = $sessionId)
  AND ($connectionId IS NULL OR t.connection_id = $connectionId) AND ($contextType IS NULL OR t.context_type = $contextType)`;

// The recall filters every search below shares: $userId, $channels, $since, $until, the
// active connections $connections (null = no connection scoping; else turns without a
// connection plus those of the listed ones) and the metadata filters of TURN_METADATA_MATCH.
const RECALL_FILTER = `t.user_id = $userId AND t.channel IN $channels
  AND t.timestamp >= datetime($since) AND t.timestamp <= datetime($until)
  AND ($connections IS NULL OR t.connection_id IS NULL OR t.connection_id IN $connections)
  AND ${TURN_METADATA_MATCH}`;

/**
 * Cypher predicate: turn `t` is the user's ($userId) and matches recall's metadata filters
 * (TURN_METADATA_MATCH, parameters from turnFilterParams). The semantic and procedural stores
 * narrow facts, entities and strategies by the turns they came from with it.
 */
export const TURN_MATCHES_FILTERS = `t.user_id = $userId
  AND ${TURN_METADATA_MATCH}`;

// $rows: [AccessCount] -> {n}: recall's access counts (reinforcement)
const ADD_ACCESS_COUNTS = addAccessCountsCypher('Turn');

// Projection of a search hit: only what ranking needs (content is fetched for the winners).
// `asks` and `dated` are stored with the turn (turnFlags); a turn stored before they were is
// evaluated here by the same rules ($timeMention is TIME_MENTION_CYPHER; coalesce reads the
// content only then). Removing them makes a changed rule apply to every turn.
const HIT = `t.id AS id, t.conversation_id AS conversationId, t.index AS index, t.channel AS channel, t.speaker AS speaker, t.role AS role,
  toString(t.timestamp) AS timestamp, coalesce(t.asks, trim(t.content) ENDS WITH '?') AS asks,
  coalesce(t.dated, t.content =~ $timeMention) AS dated`;

// $index (one of FULLTEXT_INDEXES), $query (Lucene, already scoped with +scope_key), $k, $limit,
// RECALL_FILTER params -> {HIT, score}
const FULLTEXT_SEARCH = `
CALL db.index.fulltext.queryNodes($index, $query, {limit: toInteger($k)}) YIELD node AS t, score
WHERE ${RECALL_FILTER}
RETURN ${HIT}, score ORDER BY score DESC LIMIT toInteger($limit)`;

// Vector search over one user's turns, with either projection: the ranking fields (HIT) for
// recall, or whole turns (`${TURN} AS turn`) for the facade's vectorSearch (similarTurns with content).
// $k, $embedding, $limit, RECALL_FILTER params -> {projection, score} from the (unfiltered) vector index
const vectorIndexQuery = (projection: string) => `
CALL db.index.vector.queryNodes('turn_embeddings', toInteger($k), $embedding) YIELD node AS t, score
WHERE ${RECALL_FILTER}
RETURN ${projection}, score ORDER BY score DESC LIMIT toInteger($limit)`;
// $embedding, $limit, RECALL_FILTER params -> {projection, score}: exact cosine over the user's
// turns (index seek on user_id), for users the approximate index neighbourhood does not reach.
// vector.similarity.cosine is normalised like the index score, (1 + cos) / 2.
const vectorScanQuery = (projection: string) => `
MATCH (t:Turn) WHERE ${RECALL_FILTER} AND t.embedding IS NOT NULL
WITH t, vector.similarity.cosine(t.embedding, $embedding) AS score
ORDER BY score DESC LIMIT toInteger($limit)
RETURN ${projection}, score`;
// The exact scan's answer from the user's turn embeddings held in memory (OwnerVectors,
// heldSearchCypher), and the two reads of them (migration 010 indexes (user_id, embedded_at)).
const HELD_TURNS = { label: 'Turn', v: 't', filter: RECALL_FILTER, timestamp: 't.timestamp.epochMillis', connectionId: 't.connection_id' };
const VECTOR_HELD = `${heldSearchCypher(HELD_TURNS)}
RETURN ${HIT}, score`;
const VECTOR_SEARCH_SCOPED = vectorIndexQuery(HIT);
const VECTOR_SCAN = vectorScanQuery(HIT);
const VECTOR_SEARCH = vectorIndexQuery(`${TURN} AS turn`);
const VECTOR_SCAN_TURNS = vectorScanQuery(`${TURN} AS turn`);

// $ids, RECALL_FILTER params -> {turn}. UNWIND + MATCH by id is one unique-index seek per
// id; a plain "t.id IN $ids AND t.user_id = ..." may be planned as a scan of the user's turns,
// and without the hint a plan made while Turn was nearly empty scanned an index per id.
const TURNS_BY_IDS = `
UNWIND $ids AS id
MATCH (t:Turn {id: id}) USING INDEX SEEK t:Turn(id) WHERE ${RECALL_FILTER}
RETURN ${TURN} AS turn`;

// $userId -> {n}: the user's turns. The timestamp predicate lets the planner seek the
// (user_id, timestamp) index; without it, this counts by scanning every turn (~100 ms at 100k).
const COUNT_USER_TURNS = `MATCH (t:Turn) WHERE t.user_id = $userId AND t.timestamp IS NOT NULL RETURN count(t) AS n`;
// $limit -> {id, content}
const PENDING = `MATCH (t:Turn) WHERE t.embedding_pending = true RETURN t.id AS id, ${turnEmbeddingText('t')} AS content LIMIT toInteger($limit)`;
// -> {n}
// $prefix (a tenant's user-id prefix, or null for every user) -> {n}
const COUNT_PENDING = `MATCH (t:Turn) WHERE t.embedding_pending = true AND ($prefix IS NULL OR t.user_id STARTS WITH $prefix) RETURN count(t) AS n`;
// $rows: [{id, embedding}] -> {n}
const SET_EMBEDDINGS = `
UNWIND $rows AS row
MATCH (t:Turn {id: row.id})
CALL db.create.setNodeVectorProperty(t, 'embedding', row.embedding)
SET t.embedded_at = timestamp()
REMOVE t.embedding_pending
RETURN count(t) AS n`;

/** Turns per CREATE_TURNS statement of a bulk write (see writeTurns). */
const BULK_STATEMENT_ROWS = 25;

const MIN_TIME = '0001-01-01T00:00:00Z';
const MAX_TIME = '9999-12-31T23:59:59Z';
/** How much wider the index is asked again for a larger user whose turns were crowded out. */
const WIDEN = 8;

interface TurnRow {
  id: string;
  userId: string;
  channel: string;
  conversationId: string;
  index: number;
  role: Turn['role'];
  content: string;
  timestamp: string;
  tokenCount: number;
  metadataJson: string | null;
  embedded: boolean;
}

export function toTurn(row: TurnRow): Turn {
  const { metadataJson, ...rest } = row;
  return { ...rest, metadata: metadataJson ? (JSON.parse(metadataJson) as Turn['metadata']) : {} };
}

export class Neo4jEpisodicStore implements EpisodicStore {
  /** Per user, for a while: whether their turns are few enough for the exact vector scan. */
  private readonly smallUsers: SmallOwners;
  /** Small users' turn embeddings in memory, so their exact scan is ranked here (undefined: off). */
  private readonly heldVectors: OwnerVectors | undefined;

  constructor(
    private readonly db: CypherRunner,
    opts: HeldVectorsOptions & { scanMaxTurns?: number } = {},
  ) {
    this.smallUsers = SmallOwners.counted(db, COUNT_USER_TURNS, TAG('countUserTurns'), opts.scanMaxTurns);
    this.heldVectors = OwnerVectors.forLabel(db, HELD_TURNS, TAG, opts);
  }

  storeTurn(turn: NewTurn): Promise<StoreTurnResult> {
    return this.storeTurns([turn]).then((r) => r[0]!);
  }

  async storeTurns(turns: NewTurn[], opts: StoreTurnsOptions = {}): Promise<StoreTurnResult[]> {
    if (turns.length === 0) return [];
    // Fixed across the driver's retries of this call (see CREATE_TURNS).
    const writeId = randomUUID();
    return this.db.writeTx(async (tx) => {
      const results = await this.writeTurns(tx, turns, writeId, opts);
      await opts.beforeCommit?.(results);
      // A sliced write's commit applies the whole batch to the full-text index, which the
      // commits of interactive calls queue behind: it waits for them first, as its slices did.
      if (opts.pause && opts.slice !== undefined && turns.length > opts.slice) await opts.pause();
      return results;
    }, TAG('storeTurns'));
  }

  private async writeTurns(tx: ManagedTransaction, turns: NewTurn[], writeId: string, opts: StoreTurnsOptions): Promise<StoreTurnResult[]> {
    if (turns.length === 1) return [await this.writeTurn(tx, turns[0]!, writeId)];
    const conversations = new Map<string, ReturnType<typeof conversationRow>>();
    for (const t of turns) {
      const seen = conversations.get(t.conversationId);
      if (seen && (seen.userId !== t.userId || seen.channel !== t.channel)) {
        throw new ValidationError(`conversation ${t.conversationId} appears with two owners or channels in one batch`, { conversationId: t.conversationId });
      }
      if (!seen) conversations.set(t.conversationId, conversationRow(t));
    }
    const owners = (await tx.run(UPSERT_CONVERSATIONS, { conversations: [...conversations.values()] })).records.map((r) => r.toObject()) as Array<{
      id: string;
      userId: string;
      channel: string;
      turnCount: number;
    }>;
    const next = new Map<string, number>();
    for (const o of owners) {
      const wanted = conversations.get(o.id)!;
      if (o.userId !== wanted.userId || o.channel !== wanted.channel) {
        throw conversationOfAnother(o.id);
      }
      next.set(o.id, o.turnCount);
    }
    const rows = turns.map((t, i) => {
      let index = t.index;
      if (index === undefined) {
        index = next.get(t.conversationId)!;
        next.set(t.conversationId, index + 1);
      } else if (index >= next.get(t.conversationId)!) {
        next.set(t.conversationId, index + 1);
      }
      return turnRow(t, index, `${writeId}:${i}`);
    });
    // A turn twice in one batch is created by its first row (Cypher may report both rows created).
    const seen = new Set<string>();
    const results: StoreTurnResult[] = [];
    await forEachSlice(rows, opts.slice ?? rows.length, opts.pause, async (slice) => {
      // The driver packs a statement's rows and decodes its answer in one go on the event loop
      // (~0.15 ms a turn): a bulk slice goes as several statements, so that the calls of other
      // callers get the loop in between.
      for (let i = 0; i < slice.length; i += BULK_STATEMENT_ROWS) {
        for (const r of (await tx.run(CREATE_TURNS, { rows: slice.slice(i, i + BULK_STATEMENT_ROWS) })).records) {
          const turn = toTurn(r.get('turn') as TurnRow);
          results.push({ turn, created: (r.get('created') as boolean) && !seen.has(turn.id) });
          seen.add(turn.id);
        }
      }
    });
    return results;
  }

  /** One turn: its conversation and the turn in one statement (STORE_TURN). */
  private async writeTurn(tx: ManagedTransaction, t: NewTurn, writeId: string): Promise<StoreTurnResult> {
    const [r] = (await tx.run(STORE_TURN, { conversation: conversationRow(t), row: turnRow(t, t.index ?? null, `${writeId}:0`) })).records;
    if (!r) throw conversationOfAnother(t.conversationId);
    return { turn: toTurn(r.get('turn') as TurnRow), created: r.get('created') as boolean };
  }

  async getConversation(scope: AccessScope, conversationId: string): Promise<Turn[]> {
    const rows = await this.db.read<{ turn: TurnRow }>(GET_CONVERSATION, { userId: scope.userId, conversationId }, TAG('getConversation'));
    return rows.map((r) => toTurn(r.turn));
  }

  async getRecentTurns(scope: AccessScope, q: { since?: string; until?: string; limit: number }): Promise<Turn[]> {
    const rows = await this.db.read<{ turn: TurnRow }>(
      RECENT_TURNS,
      { userId: scope.userId, channels: scope.channels, since: q.since ?? MIN_TIME, until: q.until ?? MAX_TIME, limit: q.limit },
      TAG('getRecentTurns'),
    );
    return rows.map((r) => toTurn(r.turn));
  }

  async speakers(scope: AccessScope): Promise<string[]> {
    const [row] = await this.db.read<{ speakers: string[] }>(SPEAKERS, { userId: scope.userId }, TAG('speakers'));
    return row?.speakers ?? [];
  }

  async fulltextSearch(terms: readonly SearchTerm[], scope: AccessScope, q: TurnSearch): Promise<TurnHit[]> {
    const query = scopedLuceneQuery(scope, luceneTerms(terms));
    if (!query) return [];
    const index = 'turn_content_fulltext';
    // Lucene applies the owner clause; time and metadata filters apply after its limit,
    // so ask it for more when they are present.
    const narrowed = q.since !== undefined || q.until !== undefined || hasFilters(q);
    const k = narrowed ? Math.min(q.limit * 10, MAX_OVERFETCH) : q.limit;
    return this.db.read<TurnHit>(FULLTEXT_SEARCH, { index, query, k, ...recallParams(scope, q) }, TAG('fulltextSearch'));
  }

  similarTurns(embedding: number[], scope: AccessScope, q: TurnSearch): Promise<TurnHit[]>;
  similarTurns(embedding: number[], scope: AccessScope, q: TurnSearch & { content: true }): Promise<ScoredTurn[]>;
  async similarTurns(embedding: number[], scope: AccessScope, q: TurnSearch & { content?: boolean }): Promise<TurnHit[] | ScoredTurn[]> {
    if (q.content) {
      // Whole turns, exactly the limit: the index first; when it reaches too few of the
      // user's turns, theirs are scored exactly.
      const params = { embedding, ...recallParams(scope, q) };
      const rows = await indexOrFallback(
        q.limit,
        (k) => this.db.read<{ turn: TurnRow; score: number }>(VECTOR_SEARCH, { ...params, k }, TAG('vectorSearch')),
        () => this.db.read<{ turn: TurnRow; score: number }>(VECTOR_SCAN_TURNS, params, TAG('vectorSearchExact')),
        { sizes: this.smallUsers, userId: scope.userId },
      );
      return rows.map((r) => ({ turn: toTurn(r.turn), score: r.score }));
    }
    // Up to twice the limit: the user's turns among the index's k neighbours cost nothing more.
    const reach = { ...recallParams(scope, q), limit: q.limit * 2 };
    // A small user (most are) is scanned exactly, complete and cheap: counted on their first
    // search, since the index would find too few of their turns among other users'.
    if ((await this.smallUsers.small(scope.userId)) !== true) {
      // The index's k is its search breadth and its cost (at 100k turns: k 30 ~17 ms, 60 ~21 ms,
      // 100 ~26 ms, 150 ~34 ms); twice the limit leaves room for the filter.
      const k = Math.min(Math.max(q.limit * 2, 50), 2_000);
      const rows = await this.db.read<TurnHit>(VECTOR_SEARCH_SCOPED, { k, embedding, ...reach }, TAG('similarTurns'));
      if (rows.length >= q.limit) return rows;
      // Too few of the user's turns among the neighbours (other users', or outside the
      // filters): the index again, wider (a larger user's exact scan would take a second at 100k turns).
      return this.db.read<TurnHit>(VECTOR_SEARCH_SCOPED, { k: Math.min(k * WIDEN, 2_000), embedding, ...reach }, TAG('similarTurns'));
    }
    // Ranked from the user's embeddings in memory when held (not with metadata filters, which
    // memory does not know), checked and completed by Neo4j; the scan when they are not held
    // yet, or when the filter dropped so many ranked turns that others may be missing.
    const scan = () => this.db.read<TurnHit>(VECTOR_SCAN, { embedding, ...reach }, TAG('similarTurnsExact'));
    if (this.heldVectors === undefined) return scan();
    return this.heldVectors.search(
      scope.userId,
      embedding,
      hasFilters(q) ? undefined : heldFilter(scope, q),
      reach.limit,
      (held) => this.db.read<TurnHit>(VECTOR_HELD, { embedding, ...reach, ranked: held.ranked, seen: held.seen }, TAG('similarTurnsHeld')),
      scan,
    );
  }

  /** How the user's turn embeddings are held in this process: only scanned in Neo4j (`scan`, warm-up), read now (`held`), or forgotten (`forget`). */
  async holdVectors(userId: string, mode: HoldMode): Promise<void> {
    await this.heldVectors?.holdMode(userId, mode);
  }

  /** Resolves once the turn embeddings being read into memory are held (tests). */
  heldVectorsSettled(): Promise<void> {
    return this.heldVectors?.settled() ?? Promise.resolve();
  }

  async getTurnsByIds(ids: string[], scope: AccessScope, q: TurnWindow): Promise<Turn[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.read<{ turn: TurnRow }>(TURNS_BY_IDS, { ids, ...recallParams(scope, { ...q, limit: ids.length }) }, TAG('getTurnsByIds'));
    return rows.map((r) => toTurn(r.turn));
  }

  async pendingEmbeddings(limit: number): Promise<Array<{ id: string; content: string }>> {
    return this.db.read<{ id: string; content: string }>(PENDING, { limit }, TAG('pendingEmbeddings'));
  }

  async countPendingEmbeddings(userPrefix?: string): Promise<number> {
    return (await this.db.read<{ n: number }>(COUNT_PENDING, { prefix: userPrefix ?? null }, TAG('countPendingEmbeddings')))[0]?.n ?? 0;
  }

  async setEmbeddings(rows: Array<{ id: string; embedding: number[] }>): Promise<number> {
    if (rows.length === 0) return 0;
    return (await this.db.write<{ n: number }>(SET_EMBEDDINGS, { rows }, TAG('setEmbeddings')))[0]?.n ?? 0;
  }

  // ---------------------------------------------------------------- recall support

  async addAccessCounts(rows: AccessCount[]): Promise<number> {
    if (rows.length === 0) return 0;
    return (await this.db.write<{ n: number }>(ADD_ACCESS_COUNTS, { rows }, TAG('addAccessCounts')))[0]?.n ?? 0;
  }
}

/** The part of RECALL_FILTER held vectors can check (recallParams' window bounds). */
function heldFilter(scope: AccessScope, q: TurnSearch): HeldFilter {
  return { channels: scope.channels, connections: scope.connections, since: Date.parse(q.since ?? MIN_TIME), until: Date.parse(q.until ?? MAX_TIME) };
}

function hasFilters(q: TurnWindow): boolean {
  return Object.values(q.filters ?? {}).some((v) => v !== undefined);
}

/** Parameters of RECALL_FILTER (the scope's user and read channels; absent filters become null = "any") and of HIT. */
function recallParams(scope: AccessScope, q: TurnSearch): Record<string, unknown> {
  return {
    timeMention: TIME_MENTION_CYPHER,
    userId: scope.userId,
    channels: scope.channels,
    connections: scope.connections,
    since: q.since ?? MIN_TIME,
    until: q.until ?? MAX_TIME,
    limit: q.limit,
    ...turnFilterParams(q.filters ?? {}),
  };
}

/** The metadata parameters of TURN_METADATA_MATCH and TURN_MATCHES_FILTERS (an absent filter is null: any). */
export function turnFilterParams(f: TurnFilters): Record<string, string | null> {
  return { source: f.source ?? null, sessionId: f.sessionId ?? null, connectionId: f.connectionId ?? null, contextType: f.contextType ?? null };
}

/**
 * The refusal of a write into a conversation that another user or channel holds; the same
 * message for both, so it reveals nothing (the episodic and procedural writes).
 */
export function conversationOfAnother(conversationId: string): ValidationError {
  return new ValidationError(`conversation ${conversationId} belongs to another user or channel; use a new conversation id`, { conversationId });
}

/** An UPSERT_CONVERSATIONS row (STORE_TURN's $conversation) for `t`'s conversation. */
function conversationRow(t: NewTurn): { id: string; userId: string; channel: string; startedAt: string } {
  return { id: t.conversationId, userId: t.userId, channel: t.channel, startedAt: t.timestamp };
}

/** A CREATE_TURNS row of `t` at `index` (null: the conversation's next, STORE_TURN only). */
function turnRow(t: NewTurn, index: number | null, writeId: string) {
  const m = t.metadata;
  return {
    id: index === null ? null : turnId(t.conversationId, index),
    conversationId: t.conversationId,
    userId: t.userId,
    channel: t.channel,
    index,
    role: t.role,
    content: t.content,
    searchText: t.searchText,
    timestamp: t.timestamp,
    tokenCount: t.tokenCount,
    contentHash: t.contentHash,
    model: t.model ?? null,
    metadataJson: JSON.stringify(m),
    source: m.source ?? null,
    sessionId: m.sessionId ?? null,
    connectionId: m.connectionId ?? null,
    contextType: m.contextType ?? null,
    toolName: m.toolName ?? null,
    speaker: m.speaker ?? null,
    scopeKey: scopeKey(t.userId, t.channel),
    ...turnFlags(t.content),
    embedding: t.embedding ?? null,
    writeId,
  };
}
