import type { Command } from 'commander';
import type { Config } from '../config';
import { keyPrincipal, TenantNamespace } from '../access';
import type { PoolMemory } from '../pools';
import { modules } from './modules';

/** Who the pools commands act as: a tenant (as its admin, every pool) or one of its agents (--agent: its grants). */
interface PoolFlags {
  tenant?: string;
  agent?: string;
}

/** Runs `fn` on the pools acting as the flags' principal; ids are the tenant's (namespaced in, plain out). */
async function withPools(config: Config, flags: PoolFlags, fn: (pools: PoolMemory, ns: { in: (id: string) => string; out: <T>(v: T) => T }) => Promise<void>): Promise<number> {
  const { createMnemograph } = modules.container();
  const m = await createMnemograph(config, { backgroundEmbedding: false });
  try {
    const ns = flags.tenant ? new TenantNamespace(flags.tenant) : undefined;
    const pools = m.memory.as(keyPrincipal(flags.tenant ?? null, null, flags.agent ?? null)).pools;
    await fn(pools, { in: (id) => (ns ? ns.toInternal(id, 'poolId') : id), out: (v) => (ns ? ns.mapOut(v) : v) });
    return 0;
  } finally {
    await m.close();
  }
}

const print = (v: unknown) => console.log(JSON.stringify(v, null, 2));
const list = (s?: string) => (s ? s.split(',').filter(Boolean) : []);

/**
 * `mnemograph pools ...`: the memory pools of a tenant (src/pools), through the facade as the
 * HTTP API does. `--tenant T` acts as the tenant's admin (every pool); `--agent A` as that
 * agent (its grants only). Output is JSON.
 */
export function registerPoolsCommands(program: Command, config: () => Config): void {
  const pools = program.command('pools').description('shared memory pools of a tenant: grants, entries, versions, snapshots');
  const who = (c: Command) => c.option('--tenant <id>', 'the tenant (omit for the library’s own pools)').option('--agent <id>', 'act as this agent of the tenant (default: the tenant’s admin)');
  const run =
    (fn: (p: PoolMemory, ns: { in: (id: string) => string; out: <T>(v: T) => T }, ...args: never[]) => Promise<void>) =>
    async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as Command;
      process.exitCode = await withPools(config(), cmd.opts<PoolFlags>(), (p, ns) => fn(p, ns, ...(args.slice(0, -1) as never[])));
    };

  who(pools.command('list').description('the pools the caller may read')).action(run(async (p, ns) => print(ns.out(await p.listPools()))));
  who(pools.command('create').description('create a pool').argument('<pool>', 'pool id'))
    .option('--type <type>', 'shared | agent_private | team_shared | task_scoped', 'shared')
    .option('--name <name>', 'a name')
    .option('--owner <agent>', 'the owning agent (admin only)')
    .option('--read <agents>', 'comma-separated agents that read')
    .option('--write <agents>', 'comma-separated agents that write')
    .option('--public-read', 'every agent of the tenant reads')
    .option('--expires <iso>', 'when the pool is removed')
    .action(
      run(async (p, ns, pool: string, o: { type: string; name?: string; owner?: string; read?: string; write?: string; publicRead?: boolean; expires?: string }) =>
        print(
          ns.out(
            await p.createPool({
              poolId: ns.in(pool),
              type: o.type as never,
              name: o.name,
              ownerAgent: o.owner,
              access: { read: list(o.read), write: list(o.write), publicRead: o.publicRead === true },
              expiresAt: o.expires,
            }),
          ),
        ),
      ),
    );
  who(pools.command('get').argument('<pool>')).action(run(async (p, ns, pool: string) => print(ns.out(await p.getPool(ns.in(pool))))));
  who(pools.command('stats').argument('<pool>')).action(run(async (p, ns, pool: string) => print(ns.out(await p.stats(ns.in(pool))))));
  who(pools.command('delete').description('delete a pool with its entries, versions and snapshots').argument('<pool>')).action(
    run(async (p, ns, pool: string) => print(ns.out(await p.deletePool(ns.in(pool))))),
  );
  who(pools.command('grant').argument('<pool>').argument('<agent>'))
    .option('--level <level>', 'read | write', 'read')
    .action(run(async (p, ns, pool: string, agent: string, o: { level: 'read' | 'write' }) => print(ns.out(await p.grant({ poolId: ns.in(pool), agentId: agent, level: o.level })))));
  who(pools.command('revoke').argument('<pool>').argument('<agent>'))
    .option('--level <level>', 'read | write (default both)')
    .action(run(async (p, ns, pool: string, agent: string, o: { level?: 'read' | 'write' }) => print(ns.out(await p.revoke({ poolId: ns.in(pool), agentId: agent, level: o.level })))));
  who(pools.command('add').description('write an entry').argument('<pool>').argument('<content...>'))
    .option('--kind <kind>', 'fact | observation | reflection | decision | plan | tool_output | conversation_summary', 'fact')
    .option('--importance <n>', '0..1', parseFloat)
    .action(
      run(async (p, ns, pool: string, words: string[], o: { kind: string; importance?: number }) =>
        print(ns.out(await p.addEntry({ poolId: ns.in(pool), content: words.join(' '), kind: o.kind as never, importance: o.importance }))),
      ),
    );
  who(pools.command('entries').argument('<pool>'))
    .option('--archived', 'include archived entries')
    .action(run(async (p, ns, pool: string, o: { archived?: boolean }) => print(ns.out(await p.listEntries({ poolId: ns.in(pool), includeArchived: o.archived === true })))));
  who(pools.command('history').argument('<pool>').argument('<entry>')).action(run(async (p, ns, pool: string, entry: string) => print(ns.out(await p.history(ns.in(pool), entry)))));
  who(pools.command('search').argument('<query...>'))
    .option('--limit <n>', 'results', (v) => parseInt(v, 10), 10)
    .action(run(async (p, ns, words: string[], o: { limit: number }) => print(ns.out(await p.search({ query: words.join(' '), topK: o.limit })))));
  who(pools.command('snapshot').description('capture the pool now').argument('<pool>'))
    .option('--note <text>')
    .action(run(async (p, ns, pool: string, o: { note?: string }) => print(ns.out(await p.takeSnapshot(ns.in(pool), o.note)))));
  who(pools.command('snapshots').argument('<pool>')).action(run(async (p, ns, pool: string) => print(ns.out(await p.listSnapshots(ns.in(pool))))));
  who(pools.command('restore').description('put the pool back as a snapshot captured it').argument('<pool>').argument('<snapshot>')).action(
    run(async (p, ns, pool: string, snapshot: string) => print(ns.out(await p.restoreSnapshot(ns.in(pool), snapshot)))),
  );
}
