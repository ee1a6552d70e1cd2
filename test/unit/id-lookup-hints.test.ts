import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT, tsFiles } from '../support/source-files';

// `MATCH (v:Label {id: …})…WHERE v.user_id …` (or a shared filter such as `WHERE ${RECALL_FILTER}`):
// a node read by its id and then held to its owner.
const ID_LOOKUP = /MATCH \((\w+):(\w+|\$\{\w+\}) \{id: [^}]+\}\)([^\n]*\n?[^\n]*?)WHERE (?:\1\.user_id|\$\{[A-Z_]+\})/g;

/**
 * Statements that read nodes by id and also filter on the owner's indexed properties, without
 * asking for a seek of the id index: planned while a label holds (almost) no nodes, as on a fresh
 * database or right after a large delete, Neo4j chose an index scan per id for them (bench:
 * hydration 65 ms p50, access counts 396 ms p50 instead of ~1 ms) and kept that plan for its
 * replan interval. `USING INDEX` is not enough: the planner may answer it with a scan of the
 * whole id index (hydration with one channel did, at any count); `USING INDEX SEEK` may not.
 */
function unhinted(path: string, text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(ID_LOOKUP)) {
    const [, v, label, between] = m;
    if (!between!.includes(`USING INDEX SEEK ${v}:${label}(id)`)) found.push(`${path}: ${m[0].split('\n')[0]}`);
  }
  return found;
}

describe('reads by id name the id index', () => {
  it('every id lookup that also filters by owner carries USING INDEX SEEK', () => {
    const found = tsFiles(join(ROOT, 'src')).flatMap((path) => unhinted(relative(ROOT, path), readFileSync(path, 'utf8')));
    expect(found).toEqual([]);
  });

  it('finds an id lookup without the hint, on one line or two', () => {
    expect(unhinted('x.ts', 'const Q = `UNWIND $ids AS id MATCH (t:Turn {id: id}) WHERE t.user_id = $userId RETURN t`;')).toHaveLength(1);
    expect(unhinted('x.ts', 'const Q = `UNWIND $f AS fid\nMATCH (a:Entity {id: fid})-[r]-(e:Entity)\nWHERE a.user_id = $userId RETURN e`;')).toHaveLength(1);
    expect(unhinted('x.ts', 'const Q = `MATCH (n:${label} {id: r.id}) WHERE n.user_id = r.userId SET n.x = 1`;')).toHaveLength(1);
    expect(unhinted('x.ts', 'const Q = `UNWIND $ids AS id\nMATCH (t:Turn {id: id}) WHERE ${RECALL_FILTER}\nRETURN t`;')).toHaveLength(1);
    // A hint the planner may answer with a scan.
    expect(unhinted('x.ts', 'const Q = `MATCH (t:Turn {id: id}) USING INDEX t:Turn(id) WHERE t.user_id = $userId RETURN t`;')).toHaveLength(1);
    expect(unhinted('x.ts', 'const Q = `MATCH (t:Turn {id: id}) USING INDEX SEEK t:Turn(id) WHERE t.user_id = $userId RETURN t`;')).toEqual([]);
    expect(unhinted('x.ts', 'const Q = `MATCH (n:${label} {id: r.id}) USING INDEX SEEK n:${label}(id) WHERE n.user_id = r.userId`;')).toEqual([]);
  });
});
