import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { SingleBar, Presets } from 'cli-progress';
import type { Config } from '../config';
import { createMnemograph, type Mnemograph } from '../container';
import { ValidationError } from '../errors';
import { TenantNamespace } from '../access';
import { type ExportLine, PgTenantStore, type UserDataStore } from '../tenancy';

/** A user named on the command line: raw (library) id, or a tenant's user through its namespace. */
export interface UserRef {
  user: string;
  tenant?: string;
}

function internalId(ref: UserRef): string {
  return ref.tenant ? new TenantNamespace(ref.tenant).toInternal(ref.user, 'user') : ref.user;
}

async function withStores<T>(config: Config, fn: (m: Mnemograph, users: UserDataStore) => Promise<T>): Promise<T> {
  const m = await createMnemograph(config, { backgroundEmbedding: false });
  try {
    return await fn(m, m.users);
  } finally {
    await m.close();
  }
}

/** `mnemograph search --user U [--tenant T] [--channel C] [--limit N] QUERY`: what recall returns, one line per item. */
export async function searchCommand(config: Config, ref: UserRef & { channel?: string; limit: number }, query: string): Promise<number> {
  return withStores(config, async (m) => {
    const userId = internalId(ref);
    const channels = [ref.channel ?? '_global'];
    const ns = ref.tenant ? new TenantNamespace(ref.tenant) : undefined;
    const show = (id: string) => (ns ? ns.toExternal(id) : id);
    if (typeof m.memory.remember === 'function') {
      const b = await m.memory.remember({ userId, query, channels, topK: ref.limit });
      for (const f of b.facts) console.log(`fact     ${show(f.id)}  ${f.text}`);
      for (const e of b.entities) console.log(`entity   ${show(e.id)}  ${e.text}`);
      for (const g of b.goals) console.log(`goal     ${show(g.id)}  ${g.text}`);
      for (const s of b.strategies) console.log(`strategy ${show(s.id)}  ${s.text}`);
      for (const t of b.turns) console.log(`turn     ${show(t.turn.id)}  ${t.score.toFixed(3)}  ${t.turn.timestamp.slice(0, 16)} ${t.turn.role}: ${t.turn.content.slice(0, 200)}`);
      if (b.degraded.length) console.log(`(degraded: ${b.degraded.join(', ')})`);
    } else {
      for (const h of await m.memory.vectorSearch({ userId, query, channels, topK: ref.limit })) {
        console.log(`turn ${show(h.turn.id)}  ${h.score.toFixed(3)}  ${h.turn.role}: ${h.turn.content.slice(0, 200)}`);
      }
    }
    return 0;
  });
}

/** `mnemograph stats [--user U [--tenant T]]`: a user's counts, or the whole graph's per label. */
export async function statsCommand(config: Config, ref: Partial<UserRef>): Promise<number> {
  return withStores(config, async (m, users) => {
    if (ref.user) {
      const s = await users.stats(internalId(ref as UserRef));
      for (const [k, n] of Object.entries(s.nodes)) console.log(`neo4j    ${k.padEnd(24)} ${n}`);
      for (const [k, n] of Object.entries(s.rows)) console.log(`postgres ${k.padEnd(24)} ${n}`);
      console.log(`redis    ${'working keys'.padEnd(24)} ${s.workingKeys}`);
      return 0;
    }
    const rows = [...(await m.census.nodesPerLabel())].map(([label, n]) => ({ label, n }));
    for (const r of rows) console.log(`neo4j    ${r.label.padEnd(24)} ${r.n}`);
    return 0;
  });
}

/** `mnemograph export --user U [--tenant T] [--out FILE]`: JSON lines on stdout or into FILE. */
export async function exportCommand(config: Config, ref: UserRef & { out?: string }): Promise<number> {
  return withStores(config, async (_m, users) => {
    const userId = internalId(ref);
    const stats = await users.stats(userId);
    const total = Object.values(stats.nodes).reduce((a, b) => a + b, 0) + Object.values(stats.rows).reduce((a, b) => a + b, 0);
    const out = ref.out ? createWriteStream(ref.out) : process.stdout;
    const bar = ref.out ? new SingleBar({ format: 'export [{bar}] {value}/{total} nodes and rows', hideCursor: true }, Presets.shades_classic) : undefined;
    bar?.start(total, 0);
    let done = 0;
    for await (const line of users.export(userId)) {
      if (!out.write(JSON.stringify(line) + '\n')) await once(out, 'drain');
      if (line.kind === 'node' || line.kind === 'row') bar?.update(++done);
    }
    bar?.stop();
    if (ref.out) {
      await new Promise<void>((resolve, reject) => (out as ReturnType<typeof createWriteStream>).end((err?: Error | null) => (err ? reject(err) : resolve())));
      console.log(`exported ${done} nodes and rows of ${userId} to ${ref.out}`);
    }
    return 0;
  });
}

/** `mnemograph import FILE [--tenant T]`: restores an export (idempotent); the tenant, if given, takes ownership. */
export async function importCommand(config: Config, file: string, opts: { tenant?: string }): Promise<number> {
  const lines: ExportLine[] = [];
  let n = 0;
  for await (const text of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    n++;
    if (!text.trim()) continue;
    try {
      lines.push(JSON.parse(text) as ExportLine);
    } catch {
      throw new ValidationError(`invalid import: line ${n} of ${file} is not JSON`);
    }
  }
  return withStores(config, async (m, users) => {
    const header = lines[0];
    const bar = new SingleBar({ format: 'import [{bar}] {value}/{total} lines', hideCursor: true }, Presets.shades_classic);
    bar.start(Math.max(lines.length - 1, 0), 0);
    const r = await users.import(lines, { onProgress: (done) => bar.update(done) });
    bar.stop();
    if (opts.tenant && header?.kind === 'header') {
      const ns = new TenantNamespace(opts.tenant);
      if (!ns.owns(header.userId)) throw new ValidationError(`the file holds user ${header.userId}, not a user of tenant ${opts.tenant}`);
      const tenants = new PgTenantStore(m.pg.primary, 0);
      await tenants.ensureTenant(opts.tenant);
      await tenants.registerUsers(opts.tenant, [ns.toExternal(header.userId)]);
    }
    console.log(`imported ${r.nodes} nodes, ${r.relationships} relationships, ${r.rows} rows`);
    return 0;
  });
}

/** `mnemograph forget-user --user U [--tenant T] --yes`: erases the user everywhere, keeping one audit record. */
export async function forgetUserCommand(config: Config, ref: UserRef & { yes?: boolean }): Promise<number> {
  if (!ref.yes) {
    console.error('mnemograph: forget-user erases every memory of the user for good; repeat with --yes');
    return 2;
  }
  return withStores(config, async (m, users) => {
    const tenant = ref.tenant;
    const r = await users.erase(internalId(ref), { then: tenant ? () => new PgTenantStore(m.pg.primary, 0).unregisterUser(tenant, ref.user) : undefined });
    console.log(
      `erased ${r.userId}: ${r.nodesDeleted} Neo4j nodes, ${Object.values(r.rowsDeleted).reduce((a, b) => a + b, 0)} PostgreSQL rows, ${r.redisKeysDeleted} Redis keys, ${r.auditRowsRedacted} audit rows redacted (their hashes and one erasure record kept)`,
    );
    if (r.receipt) console.log(`receipt (keep it; mnemograph audit verify-receipt checks it): ${r.receipt}`);
    return 0;
  });
}

/** Flags of `mnemograph settings`: each absent flag leaves its setting unchanged. */
export interface SettingsFlags {
  memory?: string;
  topK?: string;
  rerank?: string;
  autoMine?: string;
  agent?: string;
  agentRecall?: string;
}

/**
 * `mnemograph settings --user U [--tenant T] [--memory on|off] [--top-k N|default] [--rerank on|off|default]
 * [--auto-mine on|off] [--agent A --agent-recall on|off|default]`: prints the user's memory settings as JSON, after
 * applying the given changes (through the facade: validated and audited).
 */
export async function settingsCommand(config: Config, ref: UserRef & SettingsFlags): Promise<number> {
  return withStores(config, async (m) => {
    const userId = internalId(ref);
    const onOff = (flag: string, v: string | undefined, allowDefault = false): boolean | null | undefined => {
      if (v === undefined) return undefined;
      if (v === 'on' || v === 'off') return v === 'on';
      if (allowDefault && v === 'default') return null;
      throw new ValidationError(`invalid --${flag}: use on, off${allowDefault ? ' or default' : ''}`);
    };
    if (ref.agentRecall !== undefined && !ref.agent) throw new ValidationError('--agent-recall needs --agent <id>');
    const agentRecall = onOff('agent-recall', ref.agentRecall, true);
    const patch = {
      userId,
      memoryEnabled: onOff('memory', ref.memory) ?? undefined,
      defaultTopK: ref.topK === undefined ? undefined : ref.topK === 'default' ? null : Number(ref.topK),
      rerank: onOff('rerank', ref.rerank, true),
      autoMine: onOff('auto-mine', ref.autoMine) ?? undefined,
      agents: ref.agent && agentRecall !== undefined ? { [ref.agent]: agentRecall === null ? null : { recall: agentRecall } } : undefined,
    };
    const changes = Object.values(patch).filter((v) => v !== undefined).length > 1;
    const settings = changes ? await m.memory.updateSettings(patch) : await m.memory.getSettings(userId);
    console.log(JSON.stringify({ ...settings, userId: ref.user }, null, 2));
    return 0;
  });
}

/** `mnemograph tiers --user U [--tenant T]`: counts per memory tier (working, short-term, long-term, shared). */
export async function tiersCommand(config: Config, ref: UserRef): Promise<number> {
  return withStores(config, async (m) => {
    const s = await m.memory.tierStats(internalId(ref));
    console.log(`working    keys ${s.working.keys}`);
    console.log(`short-term entries ${s.shortTerm.entries}, expired ${s.shortTerm.expired}, sessions ${s.shortTerm.sessions}, promoted ${s.shortTerm.promoted}`);
    console.log(`long-term  episodic ${s.longTerm.episodic}, semantic ${s.longTerm.semantic}, procedural ${s.longTerm.procedural}, goals ${s.longTerm.goals}`);
    console.log(
      `shared     ${
        s.shared
          ? Object.entries(s.shared)
              .map(([k, n]) => `${k} ${n}`)
              .join(', ')
          : 'not wired'
      }`,
    );
    return 0;
  });
}
