import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SchemaError } from '../errors';

/** One numbered, append-only migration file, rendered with its parameters. */
export interface MigrationFile {
  version: number;
  name: string;
  /** sha256 of the rendered text: editing an applied migration shows up as drift. */
  checksum: string;
  statements: string[];
  /** Schema objects (constraints, indexes, tables) the file creates, for drift checks. */
  objects: string[];
  /** Objects the file drops (replaced by others): no longer expected after it has run. */
  dropped: string[];
}

const FILE_RE = /^(\d{3})_([a-z0-9_]+)\.(cypher|sql)$/;

/**
 * Loads `dir`'s migrations of one kind in version order. `{{NAME}}` placeholders are filled
 * from `params`, which must be integers (so nothing user-controlled reaches the schema text).
 */
export function loadMigrations(dir: string, kind: 'cypher' | 'sql', params: Record<string, number>): MigrationFile[] {
  const files = readdirSync(dir)
    .map((f) => ({ f, m: FILE_RE.exec(f) }))
    .filter((x): x is { f: string; m: RegExpExecArray } => x.m !== null && x.m[3] === kind)
    .sort((a, b) => a.f.localeCompare(b.f));
  const seen = new Set<number>();
  return files.map(({ f, m }) => {
    const version = Number(m[1]);
    if (seen.has(version)) throw new SchemaError(`two ${kind} migrations share version ${version}; renumber ${f}`);
    seen.add(version);
    const text = render(readFileSync(join(dir, f), 'utf8'), params, f);
    return {
      version,
      name: m[2]!,
      checksum: createHash('sha256').update(text).digest('hex'),
      statements: kind === 'cypher' ? splitCypher(text) : [text],
      objects: kind === 'cypher' ? cypherObjects(text) : sqlObjects(text),
      dropped: kind === 'cypher' ? cypherDropped(text) : [],
    };
  });
}

export function render(text: string, params: Record<string, number>, file: string): string {
  return text.replace(/\{\{([A-Z_]+)\}\}/g, (_, key: string) => {
    const value = params[key];
    if (value === undefined || !Number.isInteger(value)) throw new SchemaError(`${file} needs the integer parameter ${key}`);
    return String(value);
  });
}

/** Cypher files hold one statement per `;`-terminated line group; `//` lines are comments. */
export function splitCypher(text: string): string[] {
  const body = text
    .split('\n')
    .filter((l) => !l.trim().startsWith('//'))
    .join('\n');
  return body
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export function cypherObjects(text: string): string[] {
  return [...text.matchAll(/CREATE\s+(?:CONSTRAINT|(?:VECTOR\s+|FULLTEXT\s+|RANGE\s+|TEXT\s+)?INDEX)\s+([A-Za-z_][A-Za-z0-9_]*)\s+IF NOT EXISTS/gi)].map((m) => m[1]!);
}

/** Objects some migration dropped: not expected in the schema, whichever file created them. */
export function retired(files: MigrationFile[]): Set<string> {
  return new Set(files.flatMap((f) => f.dropped));
}

export function cypherDropped(text: string): string[] {
  return [...text.matchAll(/DROP\s+(?:CONSTRAINT|INDEX)\s+([A-Za-z_][A-Za-z0-9_]*)\s+IF EXISTS/gi)].map((m) => m[1]!);
}

export function sqlObjects(text: string): string[] {
  return [...text.matchAll(/^CREATE\s+(?:TABLE|VIEW|(?:UNIQUE\s+)?INDEX|FUNCTION|TRIGGER)\s+([a-z_][a-z0-9_]*)/gim)].map((m) => m[1]!);
}
