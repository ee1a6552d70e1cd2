#!/usr/bin/env node
import { Command } from 'commander';
import { loadConfig, type Config } from '../config';
import { MnemographError, errorMessage } from '../errors';
import { REPO_ROOT } from '../migrate';
import { stackDown, stackStatus, stackUp } from '../stack';
import { migrateCommand } from './migrate-command';

/**
 * The `mnemograph` command line. Every command loads configuration from the environment
 * once; errors print as one line (code and fix), never as a stack trace, and exit non-zero.
 */
function config(): Config {
  return loadConfig(process.env);
}

const program = new Command('mnemograph').description('Long-term memory service for AI agents').showHelpAfterError();

const stack = program.command('stack').description('the local Neo4j, PostgreSQL and Redis');
stack
  .command('up')
  .description('bring up every store and return when all answer (reuses running ones)')
  .action(async () => {
    await stackUp(REPO_ROOT, config(), (line) => console.log(line));
  });
stack
  .command('down')
  .description('stop the embedded Neo4j that `stack up` started')
  .action(async () => {
    console.log((await stackDown(REPO_ROOT, config())) ? 'neo4j: stopped' : 'neo4j: was not running');
  });
stack
  .command('status')
  .description('report each store; exits 1 when one is down')
  .action(async () => {
    const statuses = await stackStatus(config());
    for (const s of statuses) {
      console.log(`${s.store.padEnd(9)} ${s.up ? 'up  ' : 'DOWN'} ${s.latencyMs !== undefined ? `${s.latencyMs.toFixed(1)} ms  ` : ''}${s.detail}`);
    }
    if (statuses.some((s) => !s.up)) process.exitCode = 1;
  });

program
  .command('migrate')
  .description('apply pending Neo4j and PostgreSQL migrations')
  .option('--check', 'only report drift (pending, missing or changed); exit 1 when there is any')
  .action(async (opts: { check?: boolean }) => {
    process.exitCode = await migrateCommand(config(), Boolean(opts.check));
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof MnemographError) {
    console.error(`mnemograph: ${err.code}: ${err.message}`);
  } else {
    console.error(`mnemograph: ${errorMessage(err)}`);
    if (process.env.DEBUG) console.error(err);
  }
  process.exit(1);
});
