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
import { applyEnvFile, loadConfig } from '../../src/config';
import { postgresUp, withDatabase } from '../../src/stack/services';

async function main(): Promise<number> {
  const [cmd, ...args] = process.argv.slice(2);
  if (!cmd) throw new Error('usage: test-database.ts CMD [ARGS...]');
  // The tests read process.env only: give them (and the CLI they spawn) what `mnemograph` commands read.
  applyEnvFile(process.env);
  const configured = loadConfig(process.env).postgres.url;
  const url = process.env.TEST_DATABASE_URL ?? withDatabase(configured, `${decodeURIComponent(new URL(configured).pathname.slice(1)) || 'mnemograph'}_test`);
  const client = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(decodeURIComponent(new URL(url).pathname.slice(1)))} WITH (FORCE)`);
  } finally {
    await client.end();
  }
  const env = { ...process.env, DATABASE_URL: url, DATABASE_READ_URL: url };
  await postgresUp(loadConfig(env)); // creates it, as `stack up` does the configured one
  const run = spawnSync(cmd, args, { stdio: 'inherit', env });
  return run.status ?? 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
