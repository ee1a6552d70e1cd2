import { OWNERS, type Owner } from '../../src/ownership';

/**
 * One owner per node and table: Cypher and SQL live only in the module that owns what they
 * name (src/ownership.ts). The check reads every .ts file under src/, takes its string
 * literals, keeps those that are Cypher or SQL, and reports each query that names a label,
 * relationship type or table its file's owner neither owns nor declares it reads, or that
 * names them only at run time in a module without a reason to.
 */

/** The contents of every string and template literal of a TypeScript source (comments skipped). */
export function stringLiterals(source: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (c === '/' && source[i + 1] === '/') {
      i = source.indexOf('\n', i);
      if (i < 0) break;
    } else if (c === '/' && source[i + 1] === '*') {
      i = source.indexOf('*/', i + 2);
      if (i < 0) break;
      i += 2;
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      let text = '';
      while (j < source.length && source[j] !== c) {
        if (source[j] === '\\') {
          text += source[j + 1] ?? '';
          j += 2;
          continue;
        }
        if (c !== '`' && source[j] === '\n') break;
        text += source[j];
        j++;
      }
      out.push(text);
      i = j + 1;
    } else {
      i++;
    }
  }
  return out;
}

export interface Query {
  language: 'cypher' | 'sql';
  text: string;
  /** Labels, relationship types and tables named in it. */
  names: string[];
  /** Names a label, type or table only at run time (interpolated, `$(...)`, element ids, the catalog). */
  dynamic: boolean;
}

const CYPHER = /\b(MATCH|MERGE|UNWIND|RETURN|DETACH DELETE|CALL db\.|SHOW (VECTOR |FULLTEXT |RANGE )?INDEXES|SHOW CONSTRAINTS)\b|\(\w*:[A-Z]\w*|-\[\w*:[A-Z_]/;
const SQL = /\bSELECT\b[\s\S]*\bFROM\b|\bSELECT\s+[a-z_]+\s*\(|\bINSERT\s+INTO\b|\bUPDATE\s+"?[a-z_]\w*"?\s+SET\b|\bDELETE\s+FROM\b|\bTRUNCATE\b|\bALTER\s+TABLE\b/;
const NODE_LABELS = /\(\w*((?::[A-Z]\w*)+)/g;
const WHERE_LABEL = /\b[a-z]\w*:([A-Z][A-Za-z0-9]*)\b/g;
const REL_TYPES = /\[\w*:([A-Z][A-Z0-9_]*(?:\s*\|\s*:?[A-Z][A-Z0-9_]*)*)/g;
const SQL_TABLES = /\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+"?([a-z_][a-z0-9_]*)\b"?(?!\s*\()/g;
const SQL_FUNCTIONS = /\b([a-z_][a-z0-9_]*)\s*\(/g;
const DYNAMIC_CYPHER = /elementId\(|db\.labels\(\)|db\.relationshipTypes\(\)|:\s*\$\(|:\s*`?\$\{/;
const DYNAMIC_SQL = /\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+\$\{|::\$\{/;
/** PostgreSQL's own catalogs and functions, never owned by us. */
const SYSTEM = /^(pg_|information_schema|jsonb?_|to_jsonb|json_|current_schema|now$|count$|sum$|max$|min$|coalesce$|extract$)/;

/** The Cypher or SQL in one string literal, or null when it is neither; `declaredFunctions` are the SQL functions to find in it. */
export function parseQuery(text: string, declaredFunctions: ReadonlySet<string>): Query | null {
  if (SQL.test(text)) {
    const names = new Set<string>();
    for (const m of text.matchAll(SQL_TABLES)) if (!SYSTEM.test(m[1]!)) names.add(m[1]!);
    for (const m of text.matchAll(SQL_FUNCTIONS)) if (declaredFunctions.has(m[1]!)) names.add(m[1]!);
    return { language: 'sql', text, names: [...names], dynamic: DYNAMIC_SQL.test(text) };
  }
  if (CYPHER.test(text)) {
    const names = new Set<string>();
    for (const m of text.matchAll(NODE_LABELS)) for (const l of m[1]!.split(':')) if (l.trim()) names.add(l.trim());
    for (const m of text.matchAll(WHERE_LABEL)) names.add(m[1]!);
    for (const m of text.matchAll(REL_TYPES)) for (const t of m[1]!.split('|')) names.add(t.replace(':', '').trim());
    return { language: 'cypher', text, names: [...names], dynamic: DYNAMIC_CYPHER.test(text) };
  }
  return null;
}

export function ownedNames(o: Owner): string[] {
  return [...o.labels, ...o.relationships, ...o.tables];
}

export const declared = new Map<string, string>();
for (const [name, o] of Object.entries(OWNERS)) for (const n of ownedNames(o)) declared.set(n, name);
/** Declared names that are SQL functions are found where they are called. */
const functions: ReadonlySet<string> = new Set(declared.keys());

function ownerOf(file: string): [string, Owner] | undefined {
  return Object.entries(OWNERS).find(([, o]) => o.files.some((f) => (f.endsWith('/') ? file.startsWith(f) : file === f)));
}

/** Every ownership violation in one file's source, as readable lines. */
export function violations(file: string, source: string): string[] {
  const owner = ownerOf(file);
  const out: string[] = [];
  for (const text of stringLiterals(source)) {
    const q = parseQuery(text, functions);
    if (!q) continue;
    const snippet = q.text.replace(/\s+/g, ' ').trim().slice(0, 70);
    for (const n of q.names) {
      const by = declared.get(n);
      if (!by) {
        out.push(`${file}: ${q.language} names ${n}, which src/ownership.ts does not declare: "${snippet}"`);
        continue;
      }
      if (!owner) {
        out.push(`${file}: ${q.language} names ${n} (owned by ${by}); call an operation of ${by} instead: "${snippet}"`);
        continue;
      }
      const [name, o] = owner;
      if (by !== name && !o.schema && !(o.reads ?? []).includes(n)) out.push(`${file}: ${q.language} names ${n}, owned by ${by}, not ${name}: "${snippet}"`);
    }
    if (q.dynamic && !owner?.[1].generic) out.push(`${file}: ${q.language} names labels, types or tables at run time outside a generic owner: "${snippet}"`);
  }
  return out;
}
