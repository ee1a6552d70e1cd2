#!/usr/bin/env node
import { randomUUID } from 'node:crypto';
import { Command } from 'commander';
import { loadConfig, type Config } from '../config';
import { MnemographError, errorMessage } from '../errors';
import { VERSION } from '../package-info';
import type { SettingsFlags } from './user-commands';
import { applyEnvFile } from '../config/env-file';
import { setProcessActor } from '../audit/actor';
import { auditReadCommands } from './audit-command';
import { registerPoolsCommands } from './pools-command';
import { modules } from './modules';

/**
 * The `mnemograph` command line. Every command loads configuration from the environment
 * once; errors print as one line (code and fix), never as a stack trace, and exit non-zero.
 * A command's module (and what it needs: the container, the API, the stores' drivers) is
 * loaded when that command runs (`modules`), so `--help` or `keys list` does not load the whole service.
 */
function config(): Config {
  applyEnvFile(process.env); // config/mnemograph.env (or MNEMOGRAPH_ENV_FILE) under what the environment sets
  return loadConfig(process.env);
}

const program = new Command('mnemograph').description('Long-term memory service for AI agents').version(VERSION).showHelpAfterError();

// Every audit row a command writes says it came from the CLI, with one request id per
// invocation and the tenant of --tenant (HTTP requests and worker runs inside `serve` and
// `worker` enter their own actor). Set here once, so no command can leave it out.
setProcessActor({ surface: 'cli', requestId: `cli-${randomUUID()}` });
program.hook('preAction', (_program, command) => {
  const tenant = command.opts<{ tenant?: unknown }>().tenant;
  if (typeof tenant === 'string') setProcessActor({ tenantId: tenant });
});

program
  .command('init')
  .description('write config/mnemograph.env from the example: a generated Neo4j password and a first API key (tenant local)')
  .option('--file <path>', 'write this file instead (default MNEMOGRAPH_ENV_FILE, else config/mnemograph.env)')
  .option('--force', 'replace an existing file')
  .option('--no-key', 'do not create an API key (PostgreSQL not set up yet)')
  .option('--database-url <url>', 'the DATABASE_URL to write, e.g. with the password Debian PostgreSQL asks for')
  .option('--tenant <id>', 'the tenant of the key', 'local')
  .action(async (opts: { file?: string; force?: boolean; key: boolean; databaseUrl?: string; tenant: string }) => {
    const { describeInit, initCommand } = modules.init();
    for (const line of describeInit(await initCommand(process.env, opts))) console.log(line);
  });

const stack = program.command('stack').description('the local Neo4j, PostgreSQL and Redis');
stack
  .command('up')
  .description('bring up every store and return when all answer (reuses running ones)')
  .action(async () => {
    const [{ stackUp }, { REPO_ROOT }] = [modules.stack(), modules.migrate()];
    await stackUp(REPO_ROOT, config(), (line) => console.log(line));
  });
stack
  .command('down')
  .description('stop the embedded Neo4j that `stack up` started')
  .action(async () => {
    const [{ stackDown }, { REPO_ROOT }] = [modules.stack(), modules.migrate()];
    console.log((await stackDown(REPO_ROOT, config())) ? 'neo4j: stopped' : 'neo4j: was not running');
  });
stack
  .command('status')
  .description('report each store; exits 1 when one is down')
  .action(async () => {
    const { stackStatus } = modules.stack();
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
    const { migrateCommand } = modules.migrateCommand();
    process.exitCode = await migrateCommand(config(), Boolean(opts.check));
  });

program
  .command('doctor')
  .description('check the stores, the schema, the embedding model and the worker; prints the fix for each problem, exits 1 if a check fails')
  .action(async () => {
    const { doctorCommand } = modules.doctor();
    process.exitCode = await doctorCommand(config());
  });

program
  .command('worker')
  .description('run the consolidation worker: consolidate, patterns, decay, cleanup, promote, audit_partitions on their schedules')
  .action(async () => {
    const { workerCommand } = modules.worker();
    process.exitCode = await workerCommand(config());
  });

program
  .command('run-job')
  .description('run one worker job now: consolidate | patterns | decay | cleanup | promote | audit_partitions')
  .argument('<name>', 'job name')
  .option('--user <id...>', 'only these users')
  .action(async (name: string, opts: { user?: string[] }) => {
    const { runJobCommand } = modules.worker();
    process.exitCode = await runJobCommand(config(), name, opts.user);
  });

// --- Service surfaces (src/api, src/mcp, src/tenancy): serve, start, mcp, keys, user data, reindex.
const port = (v: string) => Number.parseInt(v, 10);
program
  .command('serve')
  .description('run the HTTP API (with /v1/mcp, /metrics, /readyz); --worker also runs the background jobs')
  .option('--port <n>', 'port (default PORT)', port)
  .option('--worker', 'also run the worker in this process')
  .action(async (opts: { port?: number; worker?: boolean }) => {
    const { serveCommand } = modules.service();
    process.exitCode = await serveCommand(config(), { worker: Boolean(opts.worker), port: opts.port });
  });
program
  .command('start')
  .description('bring up the local stack, migrate, and run the API with the worker (what `npm start` runs)')
  .option('--port <n>', 'port (default PORT)', port)
  .option('--no-stack', 'use stores that already run (containers); do not start the local stack')
  .action(async (opts: { port?: number; stack: boolean }) => {
    const { startCommand } = modules.service();
    process.exitCode = await startCommand(config(), { stack: opts.stack, port: opts.port });
  });
program
  .command('mcp')
  .description('serve the MCP tools over stdio for one user')
  .requiredOption('--user <id>', 'the user the tools act for')
  .option('--tenant <id>', 'the tenant owning the user (ids are namespaced as the API does)')
  .option('--channel <name>', 'memory channel', '_global')
  .option('--conversation <id>', 'conversation store_turn writes to by default')
  .action(async (opts: { user: string; tenant?: string; channel?: string; conversation?: string }) => {
    const { mcpCommand } = modules.service();
    process.exitCode = await mcpCommand(config(), opts);
  });

const keys = program.command('keys').description('API keys of tenants (stored hashed in PostgreSQL)');
keys
  .command('create')
  .description('issue a key for a tenant (created if new); the key is printed once')
  .requiredOption('--tenant <id>', 'tenant id: 2-32 of a-z, 0-9, -')
  .option('--name <text>', 'a note to recognise the key by')
  .option('--role <role>', 'admin (default), agent (with --agent) or reviewer (audit log and statistics only)')
  .option('--agent <id>', 'the agent of the tenant the key acts as (implies --role agent)')
  .action(async (opts: { tenant: string; name?: string; role?: string; agent?: string }) => {
    const { keysCommand } = modules.keys();
    process.exitCode = await keysCommand(config(), 'create', opts);
  });
keys
  .command('revoke')
  .description('revoke a key by id (takes effect within API_KEY_CACHE_SECONDS)')
  .argument('<keyId>', 'the key id (the part after mg_)')
  .action(async (id: string) => {
    const { keysCommand } = modules.keys();
    process.exitCode = await keysCommand(config(), 'revoke', { id });
  });
keys
  .command('list')
  .description('list keys (never the keys themselves)')
  .option('--tenant <id>', 'only this tenant')
  .action(async (opts: { tenant?: string }) => {
    const { keysCommand } = modules.keys();
    process.exitCode = await keysCommand(config(), 'list', opts);
  });

const userOptions = (c: Command) => c.requiredOption('--user <id>', 'user id').option('--tenant <id>', 'the tenant owning the user (API users are namespaced by tenant)');
userOptions(program.command('search').description("recall a user's memories for a query"))
  .argument('<query...>', 'what to look for')
  .option('--channel <name>', 'memory channel', '_global')
  .option('--limit <n>', 'items per kind', port, 10)
  .action(async (words: string[], opts: { user: string; tenant?: string; channel?: string; limit: number }) => {
    const { searchCommand } = modules.user();
    process.exitCode = await searchCommand(config(), opts, words.join(' '));
  });
program
  .command('stats')
  .description("counts per label (whole graph), or a user's nodes, rows and working keys with --user")
  .option('--user <id>', 'user id')
  .option('--tenant <id>', 'the tenant owning the user')
  .action(async (opts: { user?: string; tenant?: string }) => {
    const { statsCommand } = modules.user();
    process.exitCode = await statsCommand(config(), opts);
  });
userOptions(program.command('settings').description("a user's memory settings (JSON), changed first by any of the flags"))
  .option('--memory <on|off>', 'memory on or off (off: recall returns nothing, mining skips the user)')
  .option('--top-k <n|default>', 'topK of a recall that names none')
  .option('--rerank <on|off|default>', 'rerank recall (default: the configuration)')
  .option('--auto-mine <on|off>', 'automatic mining by the worker')
  .option('--agent <id>', 'the agent --agent-recall applies to')
  .option('--agent-recall <on|off|default>', 'skip recall for --agent (mining goes on); default removes the override')
  .action(async (opts: { user: string; tenant?: string } & SettingsFlags) => {
    const { settingsCommand } = modules.user();
    process.exitCode = await settingsCommand(config(), opts);
  });
userOptions(program.command('tiers').description('counts per memory tier of a user: working, short-term, long-term, shared')).action(async (opts: { user: string; tenant?: string }) => {
  const { tiersCommand } = modules.user();
  process.exitCode = await tiersCommand(config(), opts);
});
userOptions(program.command('export').description("a user's whole memory as JSON lines (stdout, or --out FILE)"))
  .option('--out <file>', 'write to this file (with a progress bar)')
  .action(async (opts: { user: string; tenant?: string; out?: string }) => {
    const { exportCommand } = modules.user();
    process.exitCode = await exportCommand(config(), opts);
  });
program
  .command('import')
  .description('restore a user exported with `export` (idempotent)')
  .argument('<file>', 'JSON lines file')
  .option('--tenant <id>', 'register the user with this tenant (the file must hold one of its users)')
  .action(async (file: string, opts: { tenant?: string }) => {
    const { importCommand } = modules.user();
    process.exitCode = await importCommand(config(), file, opts);
  });
userOptions(program.command('forget-user').description('erase a user from Neo4j, PostgreSQL and Redis, keeping only an audit record of the erasure'))
  .option('--yes', 'confirm')
  .action(async (opts: { user: string; tenant?: string; yes?: boolean }) => {
    const { forgetUserCommand } = modules.user();
    process.exitCode = await forgetUserCommand(config(), opts);
  });
// --- The audit log (src/audit): one registration per subcommand on this group.
const audit = program.command('audit').description("the audit log: who did what to which user's memory, when");
auditReadCommands(audit, config);

program
  .command('reindex')
  .description('re-embed every turn, fact, entity, strategy and goal with the configured model, and make it the active one')
  .option('--user <id>', "only this user's memory (a repair; the active model is not changed)")
  .action(async (opts: { user?: string }) => {
    const { reindexCommand } = modules.reindex();
    process.exitCode = await reindexCommand(config(), opts);
  });

audit
  .command('verify')
  .description("recompute every audit row's hash, its link to the previous row of its day, and each day's head and link to the day before; names the first break (exit 1)")
  .option('--since <day>', 'only days from this UTC day on (YYYY-MM-DD)')
  .action(async (opts: { since?: string }) => {
    const { auditVerifyCommand } = modules.auditVerify();
    process.exitCode = await auditVerifyCommand(config(), opts);
  });
audit
  .command('verify-receipt')
  .description('check an erasure receipt (forget-user) against the chain: its record is there, unchanged, and the chain from its day on verifies (exit 1 when not)')
  .argument('<file>', "the receipt's JSON file, or - for stdin")
  .action(async (file: string) => {
    const { auditVerifyReceiptCommand } = modules.auditVerify();
    process.exitCode = await auditVerifyReceiptCommand(config(), file);
  });
registerPoolsCommands(program, config);

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof MnemographError) {
    console.error(`mnemograph: ${err.code}: ${err.message}`);
  } else {
    console.error(`mnemograph: ${errorMessage(err)}`);
    if (process.env.DEBUG) console.error(err);
  }
  process.exit(1);
});
