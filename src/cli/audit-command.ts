import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import type { Config } from '../config';
import { createPgPool } from '../infra/postgres';
import { parseInput } from '../schemas';
import { TenantNamespace } from '../access';
import { AuditExportQuerySchema, AuditQuerySchema, exportStream, mapRows, PgAuditReader, withExternalAffected, type AuditFilter, type AuditRow, type AuditScope } from '../audit';

/*
 * `mnemograph audit query|export`: the audit log for operators and reviewers at a shell,
 * through the same reader and filters (the same zod schemas, so the same errors) as
 * GET /v1/audit and /v1/audit/export. With --tenant the rows are that tenant's (by the
 * tenant_id column) and user ids are its own; without, every row, ids as stored.
 * Each subcommand is one registration on the `audit` group (main.ts).
 */

/** The filter flags shared by query and export, as the API names them. */
interface FilterFlags {
  tenant?: string;
  user?: string;
  operation?: string;
  memoryType?: string;
  channel?: string;
  key?: string;
  agent?: string;
  surface?: string;
  since?: string;
  until?: string;
  success?: string;
}

/** Adds the filter flags to a subcommand. */
function filterOptions(c: Command): Command {
  return c
    .option('--tenant <id>', "only this tenant's rows (user ids are the tenant's own); default every row, ids as stored")
    .option('--user <id>', 'rows about this user')
    .option('--operation <name>', 'e.g. store_turn, store_fact, retract_fact, remember, forget_user')
    .option('--memory-type <type>', 'episodic | semantic | procedural | working | system')
    .option('--channel <name>', 'rows written to this channel, or reads that searched it')
    .option('--key <keyId>', 'the API key id that acted')
    .option('--agent <id>', 'the agent the acting key is bound to')
    .option('--surface <name>', 'http | mcp | cli | worker')
    .option('--since <time>', 'at or after this ISO 8601 time or UTC date')
    .option('--until <time>', 'before this ISO 8601 time or UTC date')
    .option('--success <bool>', 'true (succeeded) or false (failed)');
}

/** The flags as the API's query-string input (strings; absent ones left out). */
function rawFilter(f: FilterFlags): Record<string, string> {
  const raw: Record<string, string | undefined> = {
    userId: f.user,
    operation: f.operation,
    memoryType: f.memoryType,
    channel: f.channel,
    keyId: f.key,
    agentId: f.agent,
    surface: f.surface,
    since: f.since,
    until: f.until,
    success: f.success,
  };
  return Object.fromEntries(Object.entries(raw).filter((e): e is [string, string] => e[1] !== undefined));
}

/** The scope, the filter in internal ids, and how rows come back (the tenant's ids with --tenant). */
function scoped<F extends AuditFilter>(tenant: string | undefined, filter: F): { scope: AuditScope; filter: F; show: (r: AuditRow) => AuditRow } {
  if (!tenant) return { scope: { allTenants: true }, filter, show: (r) => r };
  const ns = new TenantNamespace(tenant);
  return { scope: { tenantId: tenant }, filter: ns.mapIn(filter), show: (r) => ns.mapOut(withExternalAffected(ns, r)) };
}

async function withReader<T>(config: Config, fn: (reader: PgAuditReader) => Promise<T>): Promise<T> {
  const pool = createPgPool(config.postgres.readUrl ?? config.postgres.url, 2);
  try {
    return await fn(new PgAuditReader(pool));
  } finally {
    await pool.end();
  }
}

/** One line per row: when, what, about whom, where, who acted, outcome. */
export function formatRow(r: AuditRow): string {
  const who = [r.actor.surface, r.actor.keyId && `key ${r.actor.keyId}`, r.actor.agentId && `agent ${r.actor.agentId}`, r.actor.job && `job ${r.actor.job}#${r.actor.runId ?? ''}`]
    .filter(Boolean)
    .join(' ');
  const what =
    r.queryText !== null ? `"${r.queryText.slice(0, 60)}" -> ${r.resultCount ?? 0}` : r.affectedIds.slice(0, 3).join(' ') + (r.affectedIds.length > 3 ? ` +${r.affectedIds.length - 3}` : '');
  return [
    r.timestamp.slice(0, 23).replace('T', ' '),
    r.operation.padEnd(16),
    (r.userId ?? '-').padEnd(20),
    (r.channel ?? '-').padEnd(12),
    (who || '-').padEnd(34),
    r.success ? 'ok  ' : 'FAIL',
    what,
    r.errorMessage ? `(${r.errorMessage})` : '',
  ]
    .join('  ')
    .trimEnd();
}

/** Registers `audit query` and `audit export` on the `audit` command group. */
export function auditReadCommands(group: Command, config: () => Config): void {
  filterOptions(group.command('query').description('audit rows newest first, as a table (or --json); --cursor continues where a page stopped'))
    .option('--limit <n>', 'rows, 1-500', '50')
    .option('--cursor <c>', 'continue after the page that printed it')
    .option('--json', 'print the page as JSON ({rows, nextCursor})')
    .action(async (opts: FilterFlags & { limit: string; cursor?: string; json?: boolean }) => {
      process.exitCode = await auditQueryCommand(config(), opts, (line) => console.log(line));
    });
  filterOptions(group.command('export').description('every matching audit row, oldest first, as CSV or JSON lines, streamed to stdout or --out'))
    .option('--format <f>', 'csv | jsonl', 'jsonl')
    .option('--out <file>', 'write to this file instead of stdout')
    .action(async (opts: FilterFlags & { format: string; out?: string }) => {
      process.exitCode = await auditExportCommand(config(), opts);
    });
}

/** `mnemograph audit query [filters] [--tenant T] [--limit N] [--cursor C] [--json]`. */
export async function auditQueryCommand(config: Config, opts: FilterFlags & { limit: string; cursor?: string; json?: boolean }, print: (line: string) => void): Promise<number> {
  const { cursor, limit, ...filter } = parseInput(AuditQuerySchema, { ...rawFilter(opts), limit: opts.limit, ...(opts.cursor ? { cursor: opts.cursor } : {}) }, 'audit query');
  const q = scoped(opts.tenant, filter);
  const page = await withReader(config, (reader) => reader.page(q.scope, q.filter, { cursor, limit: limit ?? 50 }));
  const rows = page.rows.map(q.show);
  if (opts.json) {
    print(JSON.stringify({ rows, nextCursor: page.nextCursor }, null, 2));
    return 0;
  }
  print(['time (UTC)'.padEnd(23), 'operation'.padEnd(16), 'user'.padEnd(20), 'channel'.padEnd(12), 'actor'.padEnd(34), 'ok  ', 'ids / query'].join('  '));
  for (const r of rows) print(formatRow(r));
  print(rows.length === 0 ? '(no rows)' : page.nextCursor ? `(${rows.length} rows; more with --cursor ${page.nextCursor})` : `(${rows.length} rows)`);
  return 0;
}

/** `mnemograph audit export --format csv|jsonl [--out FILE] [filters]`: streamed, bounded memory. */
export async function auditExportCommand(config: Config, opts: FilterFlags & { format: string; out?: string }): Promise<number> {
  const { format, ...filter } = parseInput(AuditExportQuerySchema, { ...rawFilter(opts), format: opts.format }, 'audit export');
  const q = scoped(opts.tenant, filter);
  await withReader(config, async (reader) => {
    const out = opts.out ? createWriteStream(opts.out) : process.stdout;
    await pipeline(exportStream(mapRows(reader.stream(q.scope, q.filter), q.show), format), out, { end: out !== process.stdout });
  });
  return 0;
}
