import { join } from 'node:path';
import { cypherDropped, cypherObjects, loadMigrations, render, splitCypher, sqlObjects } from '../../src/migrate/files';

const root = join(__dirname, '..', '..');

describe('migration files', () => {
  it('splits Cypher into statements and skips comments', () => {
    expect(splitCypher('// header\nCREATE INDEX a IF NOT EXISTS FOR (n:X) ON (n.a);\n// c\nCREATE INDEX b IF NOT EXISTS FOR (n:X) ON (n.b);\n')).toEqual([
      'CREATE INDEX a IF NOT EXISTS FOR (n:X) ON (n.a)',
      'CREATE INDEX b IF NOT EXISTS FOR (n:X) ON (n.b)',
    ]);
  });

  it('names the objects each file creates', () => {
    expect(cypherObjects('CREATE VECTOR INDEX v IF NOT EXISTS FOR ...; CREATE CONSTRAINT c IF NOT EXISTS FOR ...; CREATE FULLTEXT INDEX f IF NOT EXISTS')).toEqual(['v', 'c', 'f']);
    expect(cypherDropped('DROP INDEX old_a IF EXISTS;\nDROP CONSTRAINT old_b IF EXISTS;\nCREATE INDEX x IF NOT EXISTS FOR (n:X) ON (n.a);')).toEqual(['old_a', 'old_b']);
    expect(sqlObjects('CREATE TABLE t (\n);\nCREATE INDEX i ON t (a);\nCREATE FUNCTION fn() RETURNS\nCREATE TRIGGER tr BEFORE INSERT ON t')).toEqual(['t', 'i', 'fn', 'tr']);
  });

  it('only substitutes integer parameters', () => {
    expect(render('dims {{D}}', { D: 512 }, 'f')).toBe('dims 512');
    expect(() => render('dims {{D}}', {}, 'f')).toThrow(/integer parameter D/);
    expect(() => render('dims {{D}}', { D: 1.5 }, 'f')).toThrow(/integer parameter D/);
  });

  it('loads the shipped migrations in order with every object named', () => {
    const cypher = loadMigrations(join(root, 'cypher'), 'cypher', { EMBEDDING_DIMENSIONS: 512 });
    expect(cypher.map((m) => m.version)).toEqual([...cypher.map((m) => m.version)].sort((a, b) => a - b));
    const objects = cypher.flatMap((m) => m.objects);
    for (const label of ['user', 'conversation', 'turn', 'entity', 'fact', 'goal', 'strategy', 'tool_invocation']) {
      expect(objects).toContain(`${label}_id_unique`);
    }
    expect(objects).toEqual(expect.arrayContaining(['turn_embeddings', 'entity_embeddings', 'fact_embeddings', 'strategy_embeddings', 'goal_embeddings']));
    // every statement creates or drops exactly one named object, so drift checks see all of them
    const dropped = cypher.flatMap((m) => m.dropped);
    expect(cypher.reduce((n, m) => n + m.statements.length, 0)).toBe(objects.length + dropped.length);
    // a retired object is dropped after it was created, and its name is not reused
    for (const name of dropped) expect(objects.filter((o) => o === name)).toHaveLength(1);
    const sql = loadMigrations(join(root, 'sql'), 'sql', { AUDIT_PARTITION_DAYS_AHEAD: 7 });
    expect(sql[0]!.objects).toEqual(expect.arrayContaining(['conversation_logs', 'memory_audit_log', 'idx_logs_timestamp', 'ensure_audit_partitions']));
  });
});
