import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT, tsFiles } from '../support/source-files';
import { OWNERS } from '../../src/ownership';
import { declared, ownedNames, violations } from '../support/ownership-check';

describe('one owner per node and table', () => {
  it('declares every label, relationship type and table once', () => {
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const [name, o] of Object.entries(OWNERS)) {
      for (const n of ownedNames(o)) {
        if (seen.has(n)) twice.push(`${n}: ${seen.get(n)} and ${name}`);
        seen.set(n, name);
      }
      for (const r of o.reads ?? []) expect([r, declared.has(r)]).toEqual([r, true]);
    }
    expect(twice).toEqual([]);
  });

  it('keeps every query of src/ in the module that owns what it names', () => {
    const found = tsFiles(join(ROOT, 'src')).flatMap((path) => violations(relative(ROOT, path).split('\\').join('/'), readFileSync(path, 'utf8')));
    expect(found).toEqual([]);
  });

  it('finds a query outside its owner', () => {
    const job = "import x from 'y';\nconst TURNS = 'MATCH (t:Turn) RETURN t';\n";
    expect(violations('src/worker/jobs/decay.ts', job)).toEqual([expect.stringContaining('names Turn (owned by episodic)')]);
    expect(violations('src/api/metrics.ts', 'const Q = `SELECT job FROM worker_job_runs`;')).toEqual([expect.stringContaining('names worker_job_runs (owned by worker)')]);
    expect(violations('src/cli/main.ts', "const Q = 'DELETE FROM observations WHERE user_id = $1';")).toHaveLength(1);
    expect(violations('src/goals/neo4j-goal-store.ts', 'const Q = `MATCH (g:Goal)-[:ABOUT]->(e:Entity) RETURN g`;')).toEqual([
      expect.stringContaining('names Entity, owned by semantic, not goals'),
      expect.stringContaining('names ABOUT, owned by semantic, not goals'),
    ]);
    expect(violations('src/semantic/x.ts', 'const Q = `MATCH (n:Mystery) RETURN n`;')).toEqual([expect.stringContaining('does not declare')]);
    const dynamic = 'const Q = (label: string) => `MATCH (n:\\`${label}\\`) RETURN count(n)`;';
    expect(violations('src/worker/jobs/x.ts', dynamic)).toEqual([expect.stringContaining('at run time outside a generic owner')]);
  });

  it('ignores comments, prose and queries that name nothing', () => {
    const src = "/** (:User)-[:HAS_CONVERSATION]->(:Conversation) */\n// MATCH (t:Turn) RETURN t\nconst a = 'Neo4j at bolt://127.0.0.1:7687 refused';\nconst b = 'SELECT 1';\nconst c = 'RETURN 1';\n";
    expect(violations('src/api/health.ts', src)).toEqual([]);
  });
});
