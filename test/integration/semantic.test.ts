import { createMnemograph, type Mnemograph } from '../../src/container';
import { NotFoundError, ValidationError } from '../../src/errors';
import { scopeKey } from '../../src/access';
import { Neo4jProceduralStore } from '../../src/procedural';
import { Neo4jSemanticStore } from '../../src/semantic';
import { NEO4J_BACKFILLS } from '../../src/migrate/backfills';
import { eventually, expectSameRanking, recordingReads, testConfig, uid } from '../support/stack';
import { userScope } from '../../src/access';
import type { Fact } from '../../src/semantic';

let m: Mnemograph;
beforeAll(async () => {
  m = await createMnemograph(testConfig({ AUDIT_LEVEL: 'writes', EMBEDDING_MODE: 'deferred', LOG_LEVEL: 'silent' }), { backgroundEmbedding: false });
});
afterAll(async () => m.close());

const tag = { subsystem: 'test', op: 'check' };
async function count(cypher: string, params: Record<string, unknown>): Promise<number> {
  return (await m.neo4j.read<{ n: number }>(cypher, params, tag))[0]!.n;
}
/** Nodes a user owns in semantic memory (their User node appears with any write). */
async function ownedNodes(userId: string): Promise<number> {
  return count(
    `CALL () { MATCH (n:User {id: $u}) RETURN n UNION MATCH (n:Entity) WHERE n.user_id = $u RETURN n UNION MATCH (n:Fact) WHERE n.user_id = $u RETURN n }
     RETURN count(n) AS n`,
    { u: userId },
  );
}
async function turnIn(userId: string, conversationId: string, content: string, channel = '_global'): Promise<string> {
  return (await m.memory.storeTurn({ userId, channel, conversationId, role: 'user', content })).turn.id;
}

describe('upsertEntity: entity resolution', () => {
  it('merges "Vitaly", "Vitya" and "my boss" into one person and keeps other people apart', async () => {
    const userId = uid('u');
    const first = await m.memory.upsertEntity({ userId, name: 'Vitaly', type: 'person', aliases: ['Vitya'], description: 'my manager at work' });
    expect(first).toMatchObject({ created: true, matchedBy: null });

    const byAlias = await m.memory.upsertEntity({ userId, name: 'vitya', type: 'person' });
    expect(byAlias).toMatchObject({ created: false, matchedBy: 'alias' });
    expect(byAlias.entity.id).toBe(first.entity.id);

    const boss = await m.memory.upsertEntity({ userId, name: 'my boss', type: 'person', aliases: ['Vitaly'] });
    expect(boss.entity.id).toBe(first.entity.id);
    expect(boss.entity.aliases).toEqual(['Vitya', 'my boss']);
    expect(boss.entity.mentionCount).toBe(3);
    expect((await m.memory.upsertEntity({ userId, name: 'My Boss', type: 'other' })).entity.id).toBe(first.entity.id);

    // Same first name, different person; same word, different type: all separate.
    const other = await m.memory.upsertEntity({ userId, name: 'Vitaly Ivanov', type: 'person' });
    const place = await m.memory.upsertEntity({ userId, name: 'Vitya', type: 'place' });
    expect(other.created && place.created).toBe(true);
    expect(new Set([first.entity.id, other.entity.id, place.entity.id]).size).toBe(3);
    // Another user's "Vitaly" is never merged with this one.
    const stranger = await m.memory.upsertEntity({ userId: uid('u'), name: 'Vitaly', type: 'person' });
    expect(stranger.created).toBe(true);

    // aliases_text is kept in sync, so the full-text index finds the person by an alias.
    const node = await m.neo4j.read<{ t: string }>('MATCH (e:Entity {id: $id}) RETURN e.aliases_text AS t', { id: first.entity.id }, tag);
    expect(node[0]!.t).toBe('Vitya my boss');
    const hits = await m.memory.semantic.searchEntitiesText({ userId, query: 'boss' });
    expect(hits.map((h) => h.entity.id)).toEqual([first.entity.id]);
    expect(await count('MATCH (:User {id: $userId})-[:HAS_ENTITY]->(e:Entity) RETURN count(e) AS n', { userId })).toBe(3);
  });

  it('merges by embedding similarity only for the same type above the threshold', async () => {
    const userId = uid('u');
    const [v] = await m.embedder.embed(['Robert, the tall neighbour who fixes bikes']);
    const near = v!.map((x, i) => (i % 2 === 0 ? x : -x)); // cosine with v far below the threshold
    const bob = await m.memory.upsertEntity({ userId, name: 'Robert', type: 'person', embedding: v });
    const same = await m.memory.upsertEntity({ userId, name: 'the bike guy', type: 'person', embedding: v });
    expect(same).toMatchObject({ created: false, matchedBy: 'embedding' });
    expect(same.entity.id).toBe(bob.entity.id);
    expect((await m.memory.upsertEntity({ userId, name: 'Bike Shop', type: 'organization', embedding: v })).created).toBe(true);
    expect((await m.memory.upsertEntity({ userId, name: 'Roberta', type: 'person', embedding: near })).created).toBe(true);
  });

  it('resolves within the channel and _global, not across projects', async () => {
    const userId = uid('u');
    const global = await m.memory.upsertEntity({ userId, name: 'Acme', type: 'organization' });
    expect((await m.memory.upsertEntity({ userId, channel: 'proj-a', name: 'ACME', type: 'organization' })).entity.id).toBe(global.entity.id);
    const a = await m.memory.upsertEntity({ userId, channel: 'proj-a', name: 'Falcon', type: 'project' });
    const b = await m.memory.upsertEntity({ userId, channel: 'proj-b', name: 'Falcon', type: 'project' });
    expect(b.entity.id).not.toBe(a.entity.id);
  });
});

describe('facts', () => {
  it('stores a fact with provenance, ABOUT, temporal tag and validity, and learnFact reinforces instead of duplicating', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    const turnId = await turnIn(userId, conversationId, 'My sister Alice moved to Lisbon last year.');
    const alice = await m.memory.upsertEntity({ userId, name: 'Alice', type: 'person', sourceTurnId: turnId });
    const { fact, created } = await m.memory.storeFact({
      userId,
      claim: 'Alice lives in Lisbon',
      certainty: 'explicit',
      source: 'extraction:rules',
      sourceTurnId: turnId,
      aboutEntityIds: [alice.entity.id],
      predicate: 'lives_in',
      validFrom: '2024-01-01T00:00:00Z',
    });
    expect(created).toBe(true);
    expect(fact).toMatchObject({
      claim: 'Alice lives in Lisbon',
      confidence: 0.95,
      source: 'extraction:rules',
      sourceTurnId: turnId,
      temporal: 'current',
      status: 'active',
      validTo: null,
      aboutEntityIds: [alice.entity.id],
      predicate: 'lives_in',
      protected: false,
      accessCount: 0,
      embedded: true,
    });
    expect(Date.parse(fact.validFrom)).toBe(Date.parse('2024-01-01T00:00:00Z'));
    expect(await count('MATCH (:Fact {id: $id})-[:DERIVED_FROM]->(:Turn {id: $turnId}) RETURN count(*) AS n', { id: fact.id, turnId })).toBe(1);
    expect(await count('MATCH (:Conversation {id: $conversationId})-[:MENTIONS]->(:Entity {id: $e}) RETURN count(*) AS n', { conversationId, e: alice.entity.id })).toBe(1);

    const turn2 = await turnIn(userId, uid('c'), 'Alice lives in Lisbon, by the way.');
    const again = await m.memory.learnFact({ userId, claim: 'alice lives in lisbon.', predicate: 'lives_in', sourceTurnId: turn2, confidence: 0.99 });
    expect(again).toMatchObject({ created: false, reinforced: true });
    expect(again.fact.id).toBe(fact.id);
    expect(again.fact.confidence).toBe(0.99);
    expect(await count('MATCH (:Fact {id: $id})-[:DERIVED_FROM]->(t:Turn) RETURN count(t) AS n', { id: fact.id })).toBe(2);
    const past = await m.memory.learnFact({ userId, claim: 'Alice lived in Porto', temporal: 'past', certainty: 'inferred' });
    expect(past.created).toBe(true);
    expect(past.fact).toMatchObject({ temporal: 'past', confidence: 0.7, certainty: 'inferred' });
    // A repeated caller-chosen id is a no-op.
    const id = uid('f');
    await m.memory.storeFact({ userId, id, claim: 'Alice has a cat' });
    expect((await m.memory.storeFact({ userId, id, claim: 'Alice has a cat' })).created).toBe(false);
  });

  it('a correction closes the old fact (kept, SUPERSEDES) and the timeline shows both', async () => {
    const userId = uid('u');
    const bob = await m.memory.upsertEntity({ userId, name: 'Bob', type: 'person' });
    const old = await m.memory.storeFact({ userId, claim: 'Bob works at Initech', aboutEntityIds: [bob.entity.id], predicate: 'works_at', validFrom: '2020-05-01T00:00:00Z' });
    const { oldFact, newFact } = await m.memory.correctFact({ userId, factId: old.fact.id, claim: 'Bob works at Globex', reason: 'user said "actually, Globex"' });
    expect(oldFact).toMatchObject({ id: old.fact.id, status: 'superseded', supersededBy: newFact.id });
    expect(oldFact.validTo).not.toBeNull();
    expect(newFact).toMatchObject({ status: 'active', predicate: 'works_at', aboutEntityIds: [bob.entity.id], source: 'correction', validTo: null });
    expect(await count('MATCH (:Fact {id: $n})-[:SUPERSEDES]->(:Fact {id: $o}) RETURN count(*) AS n', { n: newFact.id, o: oldFact.id })).toBe(1);

    const timeline = await m.memory.getEntityTimeline({ userId, entityId: bob.entity.id });
    expect(timeline.map((e) => [e.fact!.claim, e.fact!.status])).toEqual([
      ['Bob works at Initech', 'superseded'],
      ['Bob works at Globex', 'active'],
    ]);
    // Current reads see only the new one; the old one cannot be corrected again.
    expect((await m.memory.semantic.findFacts({ userId, entityId: bob.entity.id })).map((f) => f.id)).toEqual([newFact.id]);
    await expect(m.memory.correctFact({ userId, factId: old.fact.id, claim: 'Bob works at Hooli' })).rejects.toThrow(ValidationError);
  });

  it('confirmFact protects a fact from decay; retractFact soft-deletes it', async () => {
    const userId = uid('u');
    const { fact } = await m.memory.storeFact({ userId, claim: 'I am allergic to peanuts', certainty: 'implied' });
    const confirmed = await m.memory.confirmFact(userId, fact.id);
    expect(confirmed.protected).toBe(true);
    const rate = await m.neo4j.read<{ r: number }>('MATCH (f:Fact {id: $id}) RETURN f.decay_rate AS r', { id: fact.id }, tag);
    expect(rate[0]!.r).toBe(0);
    const retracted = await m.memory.semantic.retractFact(userId, fact.id, 'user asked to forget');
    expect(retracted.status).toBe('retracted');
    expect(await count('MATCH (f:Fact {id: $id}) RETURN count(f) AS n', { id: fact.id })).toBe(1);
  });
});

describe('relationships and graph', () => {
  it('keeps relationship history, validates types, and expands the graph to the asked depth', async () => {
    const userId = uid('u');
    const e = async (name: string, type: string) => (await m.memory.upsertEntity({ userId, name, type })).entity.id;
    const [dana, initech, globex, berlin, eve] = [
      await e('Dana', 'person'),
      await e('Initech', 'organization'),
      await e('Globex', 'organization'),
      await e('Berlin', 'place'),
      await e('Eve', 'person'),
    ];
    const first = await m.memory.createRelationship({ userId, sourceId: dana, targetId: initech, type: 'WORKS_FOR', validFrom: '2019-01-01T00:00:00Z' });
    expect(first.created).toBe(true);
    expect((await m.memory.createRelationship({ userId, sourceId: dana, targetId: initech, type: 'WORKS_FOR' })).created).toBe(false);
    const moved = await m.memory.createRelationship({ userId, sourceId: dana, targetId: globex, type: 'WORKS_FOR', replaceExisting: true });
    expect(moved.closed).toEqual([first.relationship.id]);
    await m.memory.createRelationship({ userId, sourceId: globex, targetId: berlin, type: 'LOCATED_IN' });
    await m.memory.createRelationship({ userId, sourceId: eve, targetId: dana, type: 'MENTORS' });

    const timeline = await m.memory.getEntityTimeline({ userId, entityId: dana });
    expect(timeline.map((t) => [t.relationship!.type, t.relationship!.targetId, t.validTo === null])).toEqual([
      ['WORKS_FOR', initech, false],
      ['WORKS_FOR', globex, true],
      ['MENTORS', dana, true],
    ]);

    const one = await m.memory.getEntityGraph({ userId, entityIds: [dana], depth: 1 });
    expect(one.entities.map((x) => x.name).sort()).toEqual(['Dana', 'Eve', 'Globex']);
    const two = await m.memory.getEntityGraph({ userId, entityIds: [dana], depth: 2 });
    expect(two.entities.map((x) => x.name).sort()).toEqual(['Berlin', 'Dana', 'Eve', 'Globex']);
    expect(two.relationships.map((r) => r.type).sort()).toEqual(['LOCATED_IN', 'MENTORS', 'WORKS_FOR']);

    for (const type of ['works for', 'ABOUT', 'WORKS_FOR]->(x) DETACH DELETE x //', 'lower']) {
      await expect(m.memory.createRelationship({ userId, sourceId: dana, targetId: eve, type })).rejects.toThrow(ValidationError);
    }
    await expect(m.memory.getEntityGraph({ userId, entityIds: [dana], depth: 4 })).rejects.toThrow(ValidationError);
    const ended = await m.memory.semantic.endRelationship({ userId, sourceId: eve, type: 'MENTORS', targetId: dana });
    expect(ended).toHaveLength(1);
    expect((await m.memory.getEntityGraph({ userId, entityIds: [dana], depth: 1 })).entities.map((x) => x.name).sort()).toEqual(['Dana', 'Globex']);
  });
});

describe('vector search', () => {
  it('finds the relevant fact and entity of this user only', async () => {
    const [alice, bob] = [uid('alice'), uid('bob')];
    for (const userId of [alice, bob]) {
      await m.memory.storeFact({ userId, claim: 'The user is training for the Berlin marathon in September' });
      await m.memory.storeFact({ userId, claim: 'The user prefers dark roast coffee' });
      await m.memory.upsertEntity({ userId, name: 'Biscuit', type: 'animal', description: 'golden retriever dog' });
      await m.memory.upsertEntity({ userId, name: 'Postgres', type: 'tool', description: 'relational database' });
    }
    const facts = await m.memory.vectorSearchFacts({ userId: alice, query: 'What race is the user running?', topK: 5 });
    expect(facts[0]!.fact.claim).toMatch(/marathon/);
    expect(facts.every((f) => f.fact.userId === alice)).toBe(true);
    const entities = await m.memory.vectorSearchEntities({ userId: alice, query: 'pet dog', topK: 1 });
    expect(entities.map((e) => [e.entity.name, e.entity.userId])).toEqual([['Biscuit', alice]]);
    expect(await m.memory.vectorSearchEntities({ userId: alice, query: 'pet dog', types: ['tool'], topK: 5 })).toHaveLength(1);
  });

  it("counts a user first and scans a small user's facts, entities and strategies exactly, without asking the index, with the same results", async () => {
    const userId = uid('small');
    await m.memory.storeFact({ userId, claim: 'The user is training for the Berlin marathon in September' });
    await m.memory.storeFact({ userId, claim: 'The user prefers dark roast coffee' });
    await m.memory.upsertEntity({ userId, name: 'Biscuit', type: 'animal', description: 'golden retriever dog' });
    await m.memory.learnStrategy({ userId, channel: '_global', description: 'plan a long run', contextPattern: 'marathon training', toolSequence: ['calendar'], success: true });
    const ops: string[] = [];
    const recording = recordingReads(m.neo4j, ops);
    const semantic = new Neo4jSemanticStore(recording, { heldVectors: 0 });
    const procedural = new Neo4jProceduralStore(recording);
    const [embedding] = await m.embedder.embed(['What race is the user running?'], { input: 'query' });
    const scope = userScope(userId);
    const found: string[][] = [];
    for (let round = 0; round < 2; round++) {
      found.push([
        ...(await semantic.vectorSearchFacts(scope, embedding!, { limit: 10 })).map((r) => r.fact.claim),
        ...(await semantic.vectorSearchEntities(scope, embedding!, { limit: 10 })).map((r) => r.entity.name),
        ...(await procedural.vectorSearchStrategies(scope, embedding!, 10)).map((r) => r.strategy.description),
      ]);
    }
    expect(found[0]).toEqual(found[1]);
    expect(found[0]).toHaveLength(4);
    expect(found[0]![0]).toMatch(/marathon/);
    expect(ops).toEqual([
      ...['countUserFacts', 'vectorSearchFactsExact'],
      ...['countUserEntities', 'vectorSearchEntitiesExact'],
      ...['countUserStrategies', 'vectorSearchStrategiesExact'],
      ...['vectorSearchFactsExact', 'vectorSearchEntitiesExact', 'vectorSearchStrategiesExact'],
    ]);
  });

  it("ranks a small user's facts and entities from their embeddings held in memory, as the exact scan does, with Neo4j's filter and the newly embedded", async () => {
    const userId = uid('held');
    for (let i = 0; i < 30; i++) await m.memory.storeFact({ userId, channel: 'work', claim: i % 2 ? `The user rode the harbour ferry on trip ${i}` : `The user planted tomatoes in bed ${i}` });
    const places = ['Lisbon', 'Oslo', 'Hamburg', 'Naples', 'Split', 'Helsinki', 'Dover', 'Piraeus', 'Tallinn', 'Genoa', 'Calais', 'Bergen'];
    for (const [i, name] of places.entries()) await m.memory.upsertEntity({ userId, channel: 'work', name, type: i % 3 ? 'place' : 'organization', description: `a port city, ${name}` });
    // Embedded two minutes ago: memory is trusted for them (the statement rescores only those
    // embedded after the oldest transaction open at its latest read began).
    await m.neo4j.write('MATCH (n) WHERE (n:Fact OR n:Entity) AND n.user_id = $userId SET n.embedded_at = n.embedded_at - 120000', { userId }, tag);
    const [embedding] = await m.embedder.embed(['Which ferry did the user take?'], { input: 'query' });
    const ops: string[] = [];
    const held = new Neo4jSemanticStore(recordingReads(m.neo4j, ops));
    const exact = new Neo4jSemanticStore(m.neo4j, { heldVectors: 0 });
    const scope = userScope(userId, { channel: 'work' });
    const q = { limit: 8 };
    const same = async (vector = embedding!, entityQuery: { limit: number; types?: string[] } = q) => {
      const [facts, heldEntities] = [await held.vectorSearchFacts(scope, vector, q), await held.vectorSearchEntities(scope, vector, entityQuery)];
      const [exactFacts, exactEntities] = [await exact.vectorSearchFacts(scope, vector, q), await exact.vectorSearchEntities(scope, vector, entityQuery)];
      expectSameRanking(facts, exactFacts, (h) => h.fact.id);
      expect(facts.map((h) => h.fact.aboutEntityIds)).toEqual(exactFacts.map((h) => h.fact.aboutEntityIds));
      expectSameRanking(heldEntities, exactEntities, (h) => h.entity.id);
      return { facts, entities: heldEntities };
    };
    // Not held yet: the scans answer; on the user's second search their embeddings are read in the background.
    await same();
    await same();
    await held.heldVectorsSettled();
    expect(ops.slice(0, 6)).toEqual([...['countUserFacts', 'vectorSearchFactsExact', 'countUserEntities', 'vectorSearchEntitiesExact'], ...['vectorSearchFactsExact', 'vectorSearchEntitiesExact']]);
    // The two labels' reads run side by side, each listing the open transactions first.
    expect(ops.slice(6).sort()).toEqual(['heldVectorsEntity', 'heldVectorsFact', 'openTransactionsEntity', 'openTransactionsFact']);
    const first = await same();
    expect(ops.slice(-2)).toEqual(['vectorSearchFactsHeld', 'vectorSearchEntitiesHeld']);
    expect(first.facts).toHaveLength(8);
    expect(first.entities).toHaveLength(8);

    // A fact stored (and embedded) after the read is found at once: the statement scores it.
    const said = 'The user missed the last harbour ferry home on Friday';
    const fresh = (await m.memory.storeFact({ userId, channel: 'work', claim: said })).fact;
    const [asked] = await m.embedder.embed([said], { input: 'query' });
    expect((await same(asked)).facts[0]!.fact.id).toBe(fresh.id);
    expect(ops.slice(-2)).toEqual(['vectorSearchFactsHeld', 'vectorSearchEntitiesHeld']);
    // A superseded fact, a deleted one and a closed entity that memory still ranks are dropped by Neo4j's filter.
    const [top, second] = first.facts;
    await m.neo4j.write("MATCH (f:Fact {id: $id}) SET f.status = 'superseded'", { id: top!.fact.id }, tag);
    await m.neo4j.write('MATCH (f:Fact {id: $id}) DETACH DELETE f', { id: second!.fact.id }, tag);
    await m.neo4j.write('MATCH (e:Entity {id: $id}) SET e.valid_to = datetime()', { id: first.entities[0]!.entity.id }, tag);
    const after = await same();
    expect(after.facts.map((h) => h.fact.id)).not.toContain(top!.fact.id);
    expect(after.facts.map((h) => h.fact.id)).not.toContain(second!.fact.id);
    expect(after.entities.map((h) => h.entity.id)).not.toContain(first.entities[0]!.entity.id);
    // Another channel's scope sees none of them; a search by entity type, which memory does not hold, scans.
    expect(await held.vectorSearchFacts(userScope(userId, { channel: 'elsewhere' }), embedding!, q)).toHaveLength(0);
    expect(await held.vectorSearchEntities(userScope(userId, { channel: 'elsewhere' }), embedding!, q)).toHaveLength(0);
    const typed = await same(embedding, { limit: 8, types: ['organization'] });
    expect(typed.entities.map((h) => h.entity.type)).toEqual(typed.entities.map(() => 'organization'));
    expect(ops.at(-1)).toBe('vectorSearchEntitiesExact');
  });

  it('finds a fact embedded by a transaction that was open while the process read the user, once it commits', async () => {
    const userId = uid('open');
    for (let i = 0; i < 5; i++) await m.memory.storeFact({ userId, claim: `The user planted tomatoes in bed ${i}` });
    const held = new Neo4jSemanticStore(m.neo4j);
    const scope = userScope(userId);
    const said = 'The user keeps bees behind the garden shed';
    const [asked] = await m.embedder.embed([said], { input: 'query' });
    let commit!: () => void;
    const committed = new Promise<void>((resolve) => (commit = resolve));
    let begun!: () => void;
    const started = new Promise<void>((resolve) => (begun = resolve));
    // Embedded (timestamp()) inside a transaction that stays open across the read below.
    const writing = m.neo4j.writeTx(async (tx) => {
      await tx.run(
        `MATCH (u:User {id: $userId})
         CREATE (u)-[:HAS_FACT]->(f:Fact {id: $id, user_id: $userId, channel: '_global', claim: $said, status: 'active', confidence: 1.0, embedded_at: timestamp()})
         WITH f CALL db.create.setNodeVectorProperty(f, 'embedding', $embedding)`,
        { userId, id: `${userId}-bees`, said, embedding: asked },
      );
      begun();
      await committed;
    }, tag);
    await started;
    await held.holdVectors(userId, 'held');
    commit();
    await writing;
    const found = await held.vectorSearchFacts(scope, asked!, { limit: 3 });
    expect(found[0]!.fact.id).toBe(`${userId}-bees`);
  });
});

describe('full-text search', () => {
  it("finds a user's own facts, entities and strategies when thousands of other users' share their words", async () => {
    const me = uid('me');
    const crowd = uid('crowd');
    const fact = (await m.memory.storeFact({ userId: me, claim: 'The user drinks green tea with honey every morning before the long walk to work' })).fact;
    const entity = (await m.memory.upsertEntity({ userId: me, name: 'Green Tea Club', type: 'organization', description: 'a green tea tasting group that meets on Fridays' })).entity;
    const strategy = (
      await m.memory.learnStrategy({
        userId: me,
        channel: '_global',
        description: 'brew green tea for the team',
        contextPattern: 'green tea brewing at the office',
        toolSequence: ['kettle'],
        success: true,
      })
    ).strategy;
    // 6,000 shorter (higher-scoring) matches held by 600 other users: more than the 5,000
    // hits the stores used to read before filtering by owner.
    const rows = Array.from({ length: 6_000 }, (_, i) => ({ id: `${crowd}-${i}`, userId: `${crowd}-${i % 600}`, key: scopeKey(`${crowd}-${i % 600}`, '_global') }));
    try {
      for (const [label, props] of [
        ['Fact', "claim: 'green tea', status: 'active', confidence: 0.9"],
        ['Entity', "name: 'Green Tea', type: 'thing'"],
        ['Strategy', "description: 'green tea', context_pattern: 'green tea'"],
      ]) {
        await m.neo4j.write(`UNWIND $rows AS r CREATE (n:${label} {id: r.id + '-${label}', user_id: r.userId, channel: '_global', scope_key: r.key, ${props}})`, { rows }, tag);
      }
      const facts = await m.semanticStore.fullTextSearchFacts(userScope(me, { channels: ['_global'] }), 'green tea', { limit: 10 });
      expect(facts.map((r) => r.fact.id)).toEqual([fact.id]);
      const entities = await m.semanticStore.fullTextSearchEntities(userScope(me, { channels: ['_global'] }), 'green tea', { limit: 10 });
      expect(entities.map((r) => r.entity.id)).toEqual([entity.id]);
      const strategies = await new Neo4jProceduralStore(m.neo4j).fullTextSearchStrategies(userScope(me), 'green OR tea', 10);
      expect(strategies.map((r) => r.strategy.id)).toEqual([strategy.id]);
    } finally {
      await m.neo4j.write('MATCH (n) WHERE (n:Fact OR n:Entity OR n:Strategy) AND n.id STARTS WITH $crowd DETACH DELETE n', { crowd }, tag);
    }
  });
});

describe('scope key backfill (migration 006)', () => {
  it('gives facts, entities and strategies written before it their scope key, so full-text finds them', async () => {
    const userId = uid('old');
    const channel = 'proj-old';
    for (const [label, props] of [
      ['Fact', "claim: 'the legacy billing service runs on cobol', status: 'active', confidence: 0.9"],
      ['Entity', "name: 'Legacy Billing', type: 'tool'"],
      ['Strategy', "description: 'restart the legacy billing batch', context_pattern: 'legacy billing outage'"],
    ]) {
      await m.neo4j.write(`CREATE (n:${label} {id: $id, user_id: $userId, channel: $channel, ${props}})`, { id: `${userId}-${label}`, userId, channel }, tag);
    }
    const search = async () => [
      ...(await m.semanticStore.fullTextSearchFacts(userScope(userId, { channels: [channel] }), 'legacy billing', { limit: 5 })).map((r) => r.fact.id),
      ...(await m.semanticStore.fullTextSearchEntities(userScope(userId, { channels: [channel] }), 'legacy billing', { limit: 5 })).map((r) => r.entity.id),
      ...(await new Neo4jProceduralStore(m.neo4j).fullTextSearchStrategies(userScope(userId, { channels: [channel] }), 'legacy OR billing', 5)).map((r) => r.strategy.id),
    ];
    expect(await search()).toEqual([]);
    await NEO4J_BACKFILLS[6]!(m.neo4j);
    expect(await count('MATCH (n) WHERE n.user_id = $userId AND n.scope_key = $key RETURN count(n) AS n', { userId, key: scopeKey(userId, channel) })).toBe(3);
    expect(await eventually(async () => ((await search()).length === 3 ? search() : undefined), 'the backfilled nodes indexed')).toEqual(['Fact', 'Entity', 'Strategy'].map((l) => `${userId}-${l}`));
  });
});

describe('promoteToGlobal', () => {
  it('promotes only past every threshold, links PROMOTED_FROM, and audits the thresholds', async () => {
    const userId = uid('u');
    const channel = 'proj-x';
    const t1 = await turnIn(userId, uid('c'), 'We deploy with blue-green releases.', channel);
    const { fact } = await m.memory.storeFact({ userId, channel, claim: 'Deploys use blue-green releases', sourceTurnId: t1, confidence: 0.9 });

    const early = await m.memory.promoteToGlobal({ userId, factId: fact.id, reason: 'prominent' });
    expect(early.promoted).toBe(false);
    expect(early.skippedBecause).toEqual(['access count 0 < 5', 'conversations 1 < 2']);

    const t2 = await turnIn(userId, uid('c'), 'Remember, blue-green releases for deploys.', channel);
    await m.memory.learnFact({ userId, channel, claim: 'Deploys use blue-green releases', sourceTurnId: t2, confidence: 0.9 });
    for (let i = 0; i < 5; i++) await m.memory.semantic.recordAccess({ userId, factIds: [fact.id] });

    const done = await m.memory.promoteToGlobal({ userId, factId: fact.id, reason: 'prominent' });
    expect(done).toMatchObject({ promoted: true, sourceChannel: channel, confidence: 0.9, accessCount: 5, conversationCount: 2 });
    const g = done.globalFact!;
    expect(g).toMatchObject({ channel: '_global', claim: fact.claim, promotedFrom: fact.id, status: 'active' });
    expect(await count('MATCH (:Fact {id: $g})-[:PROMOTED_FROM]->(:Fact {id: $f}) RETURN count(*) AS n', { g: g.id, f: fact.id })).toBe(1);
    expect(await count('MATCH (:Fact {id: $g})-[:DERIVED_FROM]->(t:Turn) RETURN count(t) AS n', { g: g.id })).toBe(2);
    // The project fact stays; a second promotion returns the same global fact.
    expect((await m.memory.semantic.getFact(userId, fact.id))!.status).toBe('active');
    const again = await m.memory.promoteToGlobal({ userId, factId: fact.id, reason: 'again' });
    expect(again).toMatchObject({ promoted: false, skippedBecause: ['already promoted'] });
    expect(again.globalFact!.id).toBe(g.id);
    // The global copy is indexed under the user's _global scope: full-text finds it there.
    const inGlobal = await m.semanticStore.fullTextSearchFacts(userScope(userId, { channels: ['_global'] }), 'blue-green deploys', { limit: 5 });
    expect(inGlobal.map((r) => r.fact.id)).toEqual([g.id]);

    await m.audit.flush();
    const { rows } = await m.pg.primary.query(
      `SELECT promoted_from_channel, promotion_confidence, promotion_access_count, promotion_conversation_count, metadata, target_channels, affected_ids
         FROM memory_audit_log WHERE user_id = $1 AND operation = 'promote'`,
      [userId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      promoted_from_channel: channel,
      promotion_confidence: 0.9,
      promotion_access_count: 5,
      promotion_conversation_count: 2,
      target_channels: ['_global'],
      affected_ids: [fact.id, g.id],
    });
    expect(rows[0].metadata.thresholds).toEqual({ minConfidence: 0.85, minAccessCount: 5, minConversations: 2 });

    const candidates = await m.semanticStore.findPromotionCandidates({ minConfidence: 0.85, minAccessCount: 5, minConversations: 2 }, 10_000);
    expect(candidates.some((c) => c.factId === fact.id)).toBe(false);
  });
});

describe('isolation and validation', () => {
  it("treats another user's ids as not found and writes nothing", async () => {
    const [owner, intruder] = [uid('owner'), uid('intruder')];
    const ent = await m.memory.upsertEntity({ userId: owner, name: 'Secret Project', type: 'project' });
    const { fact } = await m.memory.storeFact({ userId: owner, claim: 'The launch code is 4921', aboutEntityIds: [ent.entity.id] });
    const ownerTurn = await turnIn(owner, uid('c'), 'launch code 4921');

    expect(await m.memory.semantic.getFact(intruder, fact.id)).toBeNull();
    expect(await m.memory.semantic.getEntity(intruder, ent.entity.id)).toBeNull();
    await expect(m.memory.correctFact({ userId: intruder, factId: fact.id, claim: 'x' })).rejects.toThrow(NotFoundError);
    await expect(m.memory.confirmFact(intruder, fact.id)).rejects.toThrow(NotFoundError);
    await expect(m.memory.promoteToGlobal({ userId: intruder, factId: fact.id, reason: 'x', force: true })).rejects.toThrow(NotFoundError);
    await expect(m.memory.storeFact({ userId: intruder, claim: 'x', aboutEntityIds: [ent.entity.id] })).rejects.toThrow(NotFoundError);
    await expect(m.memory.storeFact({ userId: intruder, claim: 'x', sourceTurnId: ownerTurn })).rejects.toThrow(NotFoundError);
    await expect(m.memory.storeFact({ userId: intruder, claim: 'x', supersedes: [fact.id] })).rejects.toThrow(NotFoundError);
    await expect(m.memory.upsertEntity({ userId: intruder, name: 'x', entityId: ent.entity.id })).rejects.toThrow(NotFoundError);
    await expect(m.memory.getEntityTimeline({ userId: intruder, entityId: ent.entity.id })).rejects.toThrow(NotFoundError);
    expect((await m.memory.getEntityGraph({ userId: intruder, entityIds: [ent.entity.id] })).entities).toEqual([]);
    expect(await m.memory.semantic.searchFactsText({ userId: intruder, query: 'launch code' })).toEqual([]);
    expect(await ownedNodes(intruder)).toBe(0);
    expect((await m.memory.semantic.getFact(owner, fact.id))!).toMatchObject({ status: 'active', protected: false, claim: 'The launch code is 4921' });
  });

  it('rejects bad input with ValidationError before writing anything', async () => {
    const userId = uid('u');
    const bad: Array<() => Promise<unknown>> = [
      () => m.memory.storeFact({ userId, claim: 'x', confidence: 2 }),
      () => m.memory.storeFact({ userId, claim: '   ' }),
      () => m.memory.storeFact({ userId, claim: 'x', temporal: 'someday' as 'past' }),
      () => m.memory.storeFact({ userId, claim: 'x', validFrom: '2024-02-01T00:00:00Z', validTo: '2024-01-01T00:00:00Z' }),
      () => m.memory.storeFact({ userId, claim: 'x', sourceTurnId: 'not a turn' }),
      () => m.memory.storeFact({ userId, claim: 'x', embedding: [1, 2, 3] }),
      () => m.memory.upsertEntity({ userId, name: '' }),
      () => m.memory.upsertEntity({ userId, name: 'x', type: 'Person; DROP' }),
      () => m.memory.upsertEntity({ userId: 'bad:user', name: 'x' }),
      () => m.memory.storeFact({ userId, channel: 'bad channel', claim: 'x' }),
      () => m.memory.vectorSearchFacts({ userId }),
      () => m.memory.promoteToGlobal({ userId, factId: 'f', reason: '' }),
    ];
    for (const call of bad) await expect(call()).rejects.toThrow(ValidationError);
    expect(await ownedNodes(userId)).toBe(0);
  });
});

describe("recall's two-step reads: candidates, then the kept ones whole", () => {
  /** The candidates are the whole searches' finds, in their order, with their scores. */
  const sameFinds = (
    c: { fulltext: Array<{ item: { id: string }; score: number }>; vector: Array<{ item: { id: string }; score: number }> },
    ft: Array<{ id: string; score: number }>,
    vec: typeof ft,
  ) => {
    const hits = (list: typeof c.fulltext) => list.map((h) => ({ id: h.item.id, score: h.score }));
    expectSameRanking(hits(c.fulltext), ft, (h) => h.id);
    expectSameRanking(hits(c.vector), vec, (h) => h.id);
  };

  it('finds the candidates the whole searches find, with their scores, and reads back only what the scope may see, in the order asked', async () => {
    const userId = uid('cand');
    const other = uid('cand');
    const claims = ['The user rode the harbour ferry to Tallinn', 'The user keeps bees on the roof', 'The user rode a night ferry to Helsinki', 'The user sold the old sailing boat'];
    const facts: Fact[] = [];
    for (const claim of claims) facts.push((await m.memory.storeFact({ userId, claim, properties: { object: claim.split(' ').at(-1)! } })).fact);
    const later = await m.memory.correctFact({ userId, factId: facts[3]!.id, claim: 'The user sold the old rowing boat' });
    const foreign = (await m.memory.storeFact({ userId: other, claim: 'The user rode the harbour ferry to Tallinn' })).fact;
    const atWork = (await m.memory.storeFact({ userId, channel: 'work', claim: 'The user takes the ferry to the office' })).fact;
    const ferry = (await m.memory.upsertEntity({ userId, name: 'Harbour ferry', type: 'other', description: 'the ferry to Tallinn' })).entity;
    const bees = (await m.memory.upsertEntity({ userId, name: 'Bees', type: 'animal', description: 'on the roof' })).entity;
    const gone = (await m.memory.upsertEntity({ userId, name: 'Old ferry', type: 'other', description: 'a ferry sold for scrap' })).entity;
    await m.memory.semantic.deleteEntity(userId, gone.id);
    const scope = userScope(userId);
    const [embedding] = await m.embedder.embed(['Which ferry did the user ride to Tallinn?'], { input: 'query' });
    const store = m.semanticStore;
    const q = { limit: 10, includeInactive: true };

    const candidates = await store.factCandidates(scope, 'ferry Tallinn boat', embedding, q);
    const [ft, vec] = [await store.fullTextSearchFacts(scope, 'ferry Tallinn boat', q), await store.vectorSearchFacts(scope, embedding!, q)];
    expect(ft.length).toBeGreaterThan(1);
    expect(vec.length).toBe(5);
    sameFinds(
      candidates,
      ft.map((h) => ({ id: h.fact.id, score: h.score })),
      vec.map((h) => ({ id: h.fact.id, score: h.score })),
    );
    // A candidate carries what the superseded-fact rule and time narrowing read, as the whole fact has it.
    const whole = new Map(vec.map((h) => [h.fact.id, h.fact]));
    for (const { item } of candidates.vector)
      expect(item).toEqual({
        id: item.id,
        status: whole.get(item.id)!.status,
        supersededBy: whole.get(item.id)!.supersededBy,
        validFrom: whole.get(item.id)!.validFrom,
        properties: whole.get(item.id)!.properties,
      });
    expect(candidates.vector.find((c) => c.item.id === facts[3]!.id)?.item).toMatchObject({ status: 'superseded', supersededBy: later.newFact.id });
    expect(candidates.vector.find((c) => c.item.id === later.newFact.id)?.item.properties).toMatchObject({ is_correction: true });
    // Without an embedding only the full-text search runs.
    expect((await store.factCandidates(scope, 'ferry', undefined, q)).vector).toEqual([]);

    // Another user's fact, one of another channel and an unknown id are left out.
    const asked = [later.newFact.id, foreign.id, facts[0]!.id, atWork.id, 'fact-none', facts[3]!.id];
    const read = await store.recalledFacts(scope, asked);
    expect(read.map((f) => f.id)).toEqual([later.newFact.id, facts[0]!.id, facts[3]!.id]);
    expect(read[1]).toEqual(await m.memory.semantic.getFact(userId, facts[0]!.id));
    expect((await store.recalledFacts(userScope(userId, { channels: ['work'] }), asked)).map((f) => f.id)).toEqual([later.newFact.id, facts[0]!.id, atWork.id, facts[3]!.id]);
    expect(await store.recalledFacts(userScope(other, { channels: ['work'] }), [facts[0]!.id, atWork.id])).toEqual([]);
    expect(await store.recalledFacts(scope, [])).toEqual([]);

    const entities = await store.entityCandidates(scope, 'ferry', embedding, { limit: 10 });
    const [eft, evec] = [await store.fullTextSearchEntities(scope, 'ferry', { limit: 10 }), await store.vectorSearchEntities(scope, embedding!, { limit: 10 })];
    sameFinds(
      entities,
      eft.map((h) => ({ id: h.entity.id, score: h.score })),
      evec.map((h) => ({ id: h.entity.id, score: h.score })),
    );
    expect(entities.fulltext.map((c) => c.item)).toEqual([{ id: ferry.id, updatedAt: eft[0]!.entity.updatedAt }]);
    expect((await store.recalledEntities(scope, [bees.id, gone.id, ferry.id])).map((e) => e.name)).toEqual(['Bees', 'Harbour ferry']);
    expect(await store.recalledEntities(userScope(other), [bees.id, ferry.id])).toEqual([]);
  });
});
