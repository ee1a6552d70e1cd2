import { countTokens } from 'gpt-tokenizer/cjs/encoding/o200k_base';
import { createMnemograph, type Mnemograph } from '../../src/container';
import type { Embedder } from '../../src/embedding';
import { MnemographError } from '../../src/errors';
import { PgProfileStore } from '../../src/observations';
import { formatContext, type MemoryBundle, type RecallSource } from '../../src/retrieval';
import { Neo4jProceduralStore } from '../../src/procedural';
import { StoreKnowledgePresence, StoreProvenanceFilter, SemanticEntitySource } from '../../src/retrieval/sources';
import { userScope } from '../../src/access';
import { eventually, testConfig, uid } from '../support/stack';

let m: Mnemograph;
beforeAll(async () => {
  m = await createMnemograph(testConfig({ AUDIT_LEVEL: 'reads', EMBEDDING_MODE: 'inline', LOG_LEVEL: 'silent' }), { backgroundEmbedding: false });
});
afterAll(async () => m.close());

const ids = (items: Array<{ id: string }>) => items.map((i) => i.id);
const allIds = (b: MemoryBundle) => [...ids(b.facts), ...ids(b.entities), ...ids(b.strategies), ...ids(b.goals)];

async function entity(userId: string, name: string, extra: { channel?: string; type?: string; description?: string } = {}) {
  return (await m.memory.semantic.upsertEntity({ userId, channel: extra.channel ?? '_global', name, type: extra.type ?? 'person', description: extra.description })).entity;
}
async function fact(userId: string, claim: string, extra: Record<string, unknown> = {}) {
  return (await m.memory.semantic.learnFact({ userId, channel: '_global', claim, ...extra })).fact;
}

/** A Mnemograph whose embedder always fails: recall then has no query vector, only full-text and the graph. */
async function withoutVectors<T>(work: (x: Mnemograph) => Promise<T>, opts: { recallSources?: RecallSource[] } = {}): Promise<T> {
  const failing: Embedder = {
    provider: m.embedder.provider,
    model: m.embedder.model,
    dimensions: m.embedder.dimensions,
    embed: () => Promise.reject(new MnemographError('EMBEDDING_FAILED', 'upstream', 'model exploded')),
    close: () => Promise.resolve(),
  };
  const x = await createMnemograph(testConfig({ LOG_LEVEL: 'silent' }), { embedder: failing, backgroundEmbedding: false, ...opts });
  try {
    return await work(x);
  } finally {
    await x.close();
  }
}

describe('remember returns facts, entities, strategies, goals and the profile', () => {
  it('returns no fact that neither a keyword nor a close vector found, however few the user has', async () => {
    const userId = uid('u');
    const insurance = await fact(userId, 'The car insurance renews every March');
    const unrelated = await m.memory.remember({ userId, query: 'Where does Marta Quiroga live?' });
    expect(unrelated.facts).toEqual([]);
    const related = await m.memory.remember({ userId, query: 'When is my car insurance due?' });
    expect(ids(related.facts)).toEqual([insurance.id]);
  });

  it('returns no entity whose name merely sits near every question, and an entity a name alone answers', async () => {
    const userId = uid('u');
    for (const name of ['Pixel', 'St. Mary', 'Leeds', 'Acme Corp', 'Python']) await entity(userId, name, { type: 'other' });
    const car = await entity(userId, 'Toyota Corolla', { type: 'other', description: 'my car' });
    // e5-small scores every one of these names 0.88-0.90 against any question (the fact line is 0.875).
    const unrelated = await m.memory.remember({ userId, query: 'how do I deploy the app?' });
    expect(unrelated.entities).toEqual([]);
    const related = await m.memory.remember({ userId, query: 'what car do I drive?' });
    expect(ids(related.entities)).toEqual([car.id]);
    expect(related.entities[0]!.signals.vector?.score).toBeGreaterThan(0.905);
  });

  it('finds a learned fact and entity for a related query and says why', async () => {
    const userId = uid('u');
    const marta = await entity(userId, 'Marta Quiroga', { description: 'my older sister, a marine biologist' });
    const lives = await fact(userId, 'Marta Quiroga lives in Lisbon near the aquarium', { aboutEntityIds: [marta.id] });
    await fact(userId, 'The car insurance renews every March');
    const b = await m.memory.remember({ userId, query: 'Where does Marta Quiroga live?' });

    expect(b.degraded).toEqual([]);
    expect(b.facts[0]!.id).toBe(lives.id);
    expect(b.facts[0]!.kind).toBe('fact');
    expect(b.facts[0]!.signals.fulltext?.rank).toBe(1);
    expect(b.facts[0]!.signals.vector?.rank).toBeGreaterThanOrEqual(1);
    expect(b.facts[0]!.signals.fact?.rank).toBe(1);
    expect(b.facts[0]!.temporal).toBe('current');
    expect(b.facts[0]!.relevance).toBeGreaterThan(0);
    expect(b.entities[0]!.id).toBe(marta.id);
    expect(b.entities[0]!.text).toContain('Marta Quiroga');
    expect(b.entities[0]!.signals.fulltext?.rank).toBe(1);

    // Reinforcement: what was returned is counted, off the request path.
    await m.reinforcer.flush();
    const rows = await m.neo4j.read<{ n: number }>('MATCH (f:Fact {id: $id}) RETURN f.access_count AS n', { id: lives.id }, { subsystem: 'test', op: 'access' });
    expect(rows[0]!.n).toBeGreaterThanOrEqual(1);
  });

  it('expands matched entities through the graph to the configured depth and no further', async () => {
    const userId = uid('u');
    const zora = await entity(userId, 'Zorabel Finch', { description: 'colleague from the robotics lab' });
    const lab = await entity(userId, 'Halvorsen Robotics', { type: 'organization' });
    const city = await entity(userId, 'Trondheim', { type: 'place' });
    await m.memory.semantic.createRelationship({ userId, channel: '_global', sourceId: zora.id, targetId: lab.id, type: 'WORKS_FOR' });
    await m.memory.semantic.createRelationship({ userId, channel: '_global', sourceId: lab.id, targetId: city.id, type: 'LOCATED_IN' });

    // Without a query vector only full-text finds roots, so the rest can come only from the graph.
    const b = await withoutVectors((x) => x.memory.remember({ userId, query: 'What do I know about Zorabel?' }));
    expect(b.degraded.some((d) => d.startsWith('embed:'))).toBe(true);
    expect(ids(b.entities)).toEqual([zora.id, lab.id]); // depth 1 (RECALL_ENTITY_DEPTH default); Trondheim is 2 hops away
    expect(b.entities[0]!.related).toEqual([{ id: lab.id, text: 'Halvorsen Robotics', relation: '-WORKS_FOR->' }]);
    expect(b.entities[1]!.signals.graph?.note).toBe('depth 1 via Zorabel Finch -WORKS_FOR->');
    expect(b.entities[1]!.relevance).toBeLessThan(b.entities[0]!.relevance);

    // The depth is a setting: at 2 the city comes too, still behind the nearer entity.
    const deep = new SemanticEntitySource({
      store: m.semanticStore,
      provenance: new StoreProvenanceFilter({ semantic: m.semanticStore, procedural: new Neo4jProceduralStore(m.neo4j) }),
      settings: { ...m.config.recall, entityDepth: 2 },
    });
    const d2 = await withoutVectors((x) => x.memory.remember({ userId, query: 'What do I know about Zorabel?' }), { recallSources: [deep] });
    expect(ids(d2.entities)).toEqual([zora.id, lab.id, city.id]);
    expect(d2.entities[2]!.signals.graph?.note).toBe('depth 2 via Halvorsen Robotics -LOCATED_IN->');
  });

  it('shows a value a change of state superseded as past with its end, below the current one; a corrected mistake not at all', async () => {
    const userId = uid('u');
    const madrid = await fact(userId, 'Ines lives in Madrid', { predicate: 'lives_in', validFrom: '2020-01-01T00:00:00Z' });
    // A move: the new value supersedes the old one as a change of state (what consolidation stores).
    const valencia = (
      await m.memory.semantic.storeFact({ userId, channel: '_global', claim: 'Ines lives in Valencia', predicate: 'lives_in', validFrom: '2024-03-01T00:00:00Z', supersedes: [madrid.id] })
    ).fact;
    const home = await m.memory.remember({ userId, query: 'Where does Ines live?' });
    expect(ids(home.facts).slice(0, 2)).toEqual([valencia.id, madrid.id]);
    expect(home.facts[1]).toMatchObject({ temporal: 'past', data: expect.objectContaining({ status: 'superseded', validTo: '2024-03-01T00:00:00Z' }) });
    expect(formatContext(home)).toContain(`- [fact:${madrid.id}] Ines lives in Madrid (past, until 2024-03-01)`);
    expect(formatContext(home)).toContain(`- [fact:${valencia.id}] Ines lives in Valencia (current, since 2024-03-01)`);

    // A correction of a mistake: the old value was never true, so it is not history.
    const typo = await fact(userId, 'Ines works at Telefonica Madrid', { predicate: 'works_at' });
    const { newFact } = await m.memory.semantic.correctFact({ userId, factId: typo.id, claim: 'Ines works at Telefonica Valencia' });
    const work = await m.memory.remember({ userId, query: 'Where does Ines work at Telefonica?' });
    expect(ids(work.facts)).toContain(newFact.id);
    expect(ids(work.facts)).not.toContain(typo.id);
  });

  it('never returns superseded facts, and ranks current facts above past ones', async () => {
    const userId = uid('u');
    const old = await fact(userId, 'Dariusz works at Initech as a tester', { predicate: 'works_at' });
    const { newFact } = await m.memory.semantic.correctFact({ userId, factId: old.id, claim: 'Dariusz works at Globex as a team lead' });
    const past = await fact(userId, 'Dariusz lived in Gdansk', { temporal: 'past' });
    const closed = await fact(userId, 'Dariusz lives in Krakow', { validFrom: '2019-01-01T00:00:00Z', validTo: '2022-06-01T00:00:00Z' });
    const now = await fact(userId, 'Dariusz lives in Warsaw');

    const work = await m.memory.remember({ userId, query: 'Where does Dariusz work?' });
    expect(ids(work.facts)).toContain(newFact.id);
    expect(ids(work.facts)).not.toContain(old.id);

    const home = await m.memory.remember({ userId, query: 'Where does Dariusz live?' });
    const order = ids(home.facts);
    expect(home.facts.find((f) => f.id === now.id)!.temporal).toBe('current');
    expect(home.facts.find((f) => f.id === past.id)!.temporal).toBe('past');
    // Tagged current when said, but its validity window has closed: not current any more.
    expect(home.facts.find((f) => f.id === closed.id)!.temporal).toBe('past');
    expect(order.indexOf(now.id)).toBeLessThan(order.indexOf(past.id));
    expect(order.indexOf(now.id)).toBeLessThan(order.indexOf(closed.id));
  });

  it('never returns another user\u2019s facts, entities or goals, even with identical text', async () => {
    const [alice, bob] = [uid('alice'), uid('bob')];
    const mine = [
      (await entity(alice, 'Project Falcon', { type: 'project' })).id,
      (await fact(alice, 'The launch code for project Falcon is 4921')).id,
      (await m.memory.goals.addGoal({ userId: alice, channel: '_global', description: 'Launch project Falcon before summer' })).goal.id,
    ];
    await entity(bob, 'Project Falcon', { type: 'project' });
    await fact(bob, 'The launch code for project Falcon is 4921');
    await fact(bob, 'Falcon launch code: 4921, project Falcon launch');
    await m.memory.goals.addGoal({ userId: bob, channel: '_global', description: 'Launch project Falcon before summer' });

    const b = await m.memory.remember({ userId: alice, query: 'What is the launch code for project Falcon?' });
    expect(allIds(b).sort()).toEqual([...mine].sort());
  });

  it('covers _global from a project channel, never another project, and audits the cross-channel hits', async () => {
    const userId = uid('u');
    const global = await fact(userId, 'Priya prefers green tea over coffee');
    const here = await fact(userId, 'Priya drinks tea during the standup', { channel: 'proj-x' });
    const elsewhere = await fact(userId, 'Priya brought tea to the offsite', { channel: 'proj-y' });
    const b = await m.memory.remember({ userId, query: 'What tea does Priya drink?', channels: ['proj-x'] });
    expect(ids(b.facts).sort()).toEqual([global.id, here.id].sort());
    expect(ids(b.facts)).not.toContain(elsewhere.id);

    await m.audit.flush();
    const rows = await eventually(async () => {
      const r = await m.pg.primary.query("SELECT metadata FROM memory_audit_log WHERE user_id = $1 AND operation = 'remember'", [userId]);
      return r.rows.length > 0 ? r.rows : undefined;
    }, 'remember audit row');
    expect(rows[0].metadata.crossChannelHits).toEqual({ _global: 1 });
  });

  it('narrows facts by the metadata of the turns they came from', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    const slack = (await m.memory.storeTurn({ userId, conversationId, role: 'user', content: 'the backup runs nightly', metadata: { source: 'slack' } })).turn;
    const email = (await m.memory.storeTurn({ userId, conversationId, role: 'user', content: 'the backup moved to weekly', metadata: { source: 'email' } })).turn;
    const a = await fact(userId, 'The database backup runs nightly', { sourceTurnId: slack.id });
    const c = await fact(userId, 'The file server backup runs weekly', { sourceTurnId: email.id });
    await m.memory.goals.addGoal({ userId, channel: '_global', description: 'Verify the backup restore' });

    const all = await m.memory.remember({ userId, query: 'How often does the backup run?' });
    expect(ids(all.facts).sort()).toEqual([a.id, c.id].sort());
    expect(all.goals).toHaveLength(1);
    const bySlack = await m.memory.remember({ userId, query: 'How often does the backup run?', filters: { source: 'slack' } });
    expect(ids(bySlack.facts)).toEqual([a.id]);
    expect(bySlack.turns.map((t) => t.turn.id)).toEqual([slack.id]);
    // A goal records no source turn, so it cannot match a metadata filter.
    expect(bySlack.goals).toEqual([]);
    // A time range narrows facts too (by when they became valid).
    const later = await m.memory.remember({ userId, query: 'How often does the backup run?', filters: { since: new Date(Date.now() + 3_600_000).toISOString() } });
    expect(later.facts).toEqual([]);
  });

  it('returns active goals ranked by similarity, strategies, and the profile', async () => {
    const userId = uid('u');
    const marathon = await m.memory.goals.addGoal({ userId, channel: '_global', description: 'Run the Berlin marathon in under four hours', priority: 3 });
    const taxes = await m.memory.goals.addGoal({ userId, channel: '_global', description: 'File the 2024 tax return', priority: 9 });
    const shoes = await m.memory.goals.addGoal({ userId, channel: '_global', description: 'Buy new marathon running shoes' });
    await m.memory.goals.completeGoal({ userId, goalId: shoes.goal.id });
    const strategy = await m.memory.procedural.learnStrategy({
      userId,
      channel: '_global',
      description: 'Plan long training runs with a weekly mileage spreadsheet',
      contextPattern: 'marathon training plan',
      toolSequence: ['sheets.read', 'calendar.create'],
    });
    await new PgProfileStore().save(m.pg.primary, userId, { lives_in: 'Berlin', likes: ['running', 'rye bread'] }, 'Lives in Berlin. Likes running.');

    const b = await m.memory.remember({ userId, query: 'How is my marathon training going?' });
    expect(ids(b.goals)).toEqual([marathon.goal.id, taxes.goal.id]); // the completed goal is gone; similarity beats priority
    expect(b.goals[0]!.signals.vector?.rank).toBe(1);
    expect(b.goals[0]!.data).toMatchObject({ status: 'active', priority: 3 });
    expect(ids(b.strategies)).toEqual([strategy.strategy.id]);
    expect(b.profile).toEqual({ lives_in: 'Berlin', likes: ['running', 'rye bread'], narrative: 'Lives in Berlin. Likes running.' });

    const block = m.memory.formatContext(b, { tokenBudget: 2_000 });
    expect(block).toContain(`[goal:${marathon.goal.id}] Run the Berlin marathon in under four hours (priority 3)`);
    expect(block).toContain(`[strategy:${strategy.strategy.id}]`);
    expect(block).toContain('sheets.read → calendar.create');
    const profileLine = block.split('\n').find((l) => l.startsWith('- [profile] '));
    expect(profileLine).toContain('lives in: Berlin');
    expect(profileLine).toContain('likes: running, rye bread');
    expect(block).not.toContain('Likes running.'); // the narrative repeats the keys

    const noProfile = await m.memory.remember({ userId, query: 'marathon', includeProfile: false, includeGoals: false });
    expect(noProfile.profile).toBeNull();
    expect(noProfile.goals).toEqual([]);
  });

  it('degrades when a source fails: the others still answer', async () => {
    const userId = uid('u');
    const juno = await entity(userId, 'Juno Albrecht', { description: 'the landlord' });
    await fact(userId, 'Juno Albrecht raised the rent in May');
    await m.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'Juno Albrecht called about the rent again' });
    const broken: RecallSource = { kind: 'fact', search: () => Promise.reject(new Error('fact index offline')) };
    const entities = new SemanticEntitySource({
      store: m.semanticStore,
      provenance: new StoreProvenanceFilter({ semantic: m.semanticStore, procedural: new Neo4jProceduralStore(m.neo4j) }),
      settings: m.config.recall,
    });
    const x = await createMnemograph(testConfig({ LOG_LEVEL: 'silent' }), { backgroundEmbedding: false, recallSources: [broken, entities] });
    try {
      const b = await x.memory.remember({ userId, query: 'What did Juno Albrecht say about the rent?' });
      expect(b.degraded).toEqual(['fact: fact index offline']);
      expect(b.facts).toEqual([]);
      expect(ids(b.entities)).toEqual([juno.id]);
      expect(b.turns).toHaveLength(1);
    } finally {
      await x.close();
    }
  });

  it('renders facts with citeable ids within the token budget', async () => {
    const userId = uid('u');
    const facts = [];
    for (let i = 0; i < 8; i++) facts.push(await fact(userId, `Orchard note ${i}: the pear tree in row ${i + 1} needs pruning before the frost, and the ladder is in the shed.`));
    const b = await m.memory.remember({ userId, query: 'Which pear tree needs pruning in the orchard?', topK: 8 });
    expect(b.facts).toHaveLength(8);
    const full = m.memory.formatContext(b, { tokenBudget: 5_000 });
    for (const f of facts) expect(full).toContain(`[fact:${f.id}]`);
    expect(full.indexOf(`[fact:${b.facts[0]!.id}]`)).toBeLessThan(full.indexOf(`[fact:${b.facts[1]!.id}]`));
    for (const budget of [90, 150, 300]) {
      const block = m.memory.formatContext(b, { tokenBudget: budget });
      expect(countTokens(block)).toBeLessThanOrEqual(budget);
      expect(block).toContain(`[fact:${b.facts[0]!.id}]`);
      expect(block.split('\n').length).toBeLessThan(full.split('\n').length);
    }
  });
});

describe('knowledge presence', () => {
  it('answers every kind in one query, and sees each kind in the next call once it is written, per user and channel', async () => {
    const userId = uid('u');
    const other = uid('u');
    const presence = new StoreKnowledgePresence({ neo4j: m.neo4j });
    const kinds = async (channels: string[] = ['_global']) => [...(await presence.kinds(userScope(userId, { channels })))].sort();
    await m.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'Turns are not knowledge' });
    expect(await kinds()).toEqual([]);

    await m.memory.goals.addGoal({ userId, channel: '_global', description: 'Renew the passport' });
    expect(await kinds()).toEqual(['goal']);
    await m.memory.procedural.learnStrategy({ userId, channel: '_global', description: 'Book the consulate slot first', contextPattern: 'passport renewal', toolSequence: ['calendar.create'] });
    expect(await kinds()).toEqual(['goal', 'strategy']);
    await entity(userId, 'Consulate of Peru');
    expect(await kinds()).toEqual(['entity', 'goal', 'strategy']);
    await m.memory.semantic.learnFact({ userId, channel: 'work', claim: 'The passport expires in May' });
    expect(await kinds()).toEqual(['entity', 'goal', 'strategy']); // another channel
    expect(await kinds(['work'])).toEqual(['entity', 'fact', 'goal', 'strategy']); // work and _global
    expect([...(await presence.kinds(userScope(other)))]).toEqual([]); // another user
  });
});
