/**
 * `tsx test/support/test-database.ts CMD ARGS...`: runs CMD against a fresh PostgreSQL test
 * database, so test rows never land in the development database and do not pile up from
 * run to run. The database is TEST_DATABASE_URL, else the configured DATABASE_URL's with
 * `_test` appended to its name; it is dropped and created anew, and CMD gets it as
 * DATABASE_URL (CMD migrates it). Neo4j Community holds one database, so tests there keep
 * isolating themselves with random ids (test/support/stack.ts).
 */
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { loadConfig } from '../../src/config';

async function main(): Promise<number> {
  const [cmd, ...args] = process.argv.slice(2);
  if (!cmd) throw new Error('usage: test-database.ts CMD [ARGS...]');
  const url = new URL(process.env.TEST_DATABASE_URL ?? loadConfig(process.env).postgres.url);
  if (!process.env.TEST_DATABASE_URL) url.pathname = `/${decodeURIComponent(url.pathname.slice(1)) || 'mnemograph'}_test`;
  const database = decodeURIComponent(url.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
  const run = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, DATABASE_URL: url.toString(), DATABASE_READ_URL: url.toString() } });
  return run.status ?? 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
