/**
 * The fault and load suite (issue #22), long form: `npm run test:load`. Over HTTP against the
 * real service: a PostgreSQL stop/start and a Redis shutdown/restart (the suite's own
 * instances) and, with --neo4j-data-dir, a `kill -9` of that Neo4j, each under concurrent
 * writers with an acknowledged-write ledger checked in Neo4j, PostgreSQL and the audit log;
 * forget-user racing writers; 50 clients of mixed recall and writes. Prints the figures and
 * writes them to bench/results/faults.json.
 *
 *   npm run test:load -- --seconds 120 \
 *     --neo4j-data-dir /work/helper-stack   # with NEO4J_URI / NEO4J_HTTP_PORT of that instance
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../../src/config';
import { PACKAGE_ROOT } from '../../src/package-info';
import { forgetRace, mixedLoad, openService, outage } from './scenarios';
import { privatePostgres, privateRedis, runningNeo4j, type StoreControl } from './stores';

interface Options {
  seconds: string;
  clients: string;
  writers: string;
  downMs: string;
  rounds: string;
  neo4jDataDir?: string;
  only?: string;
  out: string;
}

async function main(): Promise<void> {
  const opts = new Command()
    .option('--seconds <n>', 'length of the mixed-load phase', '120')
    .option('--clients <n>', 'concurrent clients of the mixed-load phase', '50')
    .option('--writers <n>', 'concurrent writers during each outage', '8')
    .option('--down-ms <n>', 'how long each store stays down', '5000')
    .option('--rounds <n>', 'forget-user rounds', '8')
    .option('--neo4j-data-dir <dir>', 'kill -9 and restart the Neo4j of this data directory (never the one on 7687)')
    .option('--only <parts>', 'comma-separated: postgres, redis, neo4j, forget, load (default all)')
    .option('--out <file>', 'result file', join(PACKAGE_ROOT, 'bench/results/faults.json'))
    .parse()
    .opts<Options>();
  const base = loadConfig(process.env);
  const stores: StoreControl[] = [];
  const started = Date.now();
  try {
    const pg = await privatePostgres();
    stores.push(pg);
    const redis = await privateRedis();
    stores.push(redis);
    const neo4j = opts.neo4jDataDir ? runningNeo4j({ uri: base.neo4j.uri, httpPort: base.neo4j.httpPort, dataDir: opts.neo4jDataDir }) : undefined;
    const svc = await openService({ ...pg.env, ...redis.env });
    const result: Record<string, unknown> = {};
    try {
      const shape = { writers: Number(opts.writers), beforeMs: 2_000, downMs: Number(opts.downMs), afterMs: 3_000 };
      const runs = (part: string) => !opts.only || opts.only.split(',').includes(part);
      const outages = [];
      for (const store of [pg, redis, ...(neo4j ? [neo4j] : [])].filter((s) => runs(s.name))) {
        console.log(`outage: ${store.name}`);
        outages.push(await outage(svc, store, shape));
      }
      result.outages = outages;
      if (runs('forget')) {
        console.log('forget-user racing writers');
        result.forget_user = await forgetRace(svc, { rounds: Number(opts.rounds), writers: 4, leadMs: 300 });
      }
      if (runs('load')) {
        console.log(`mixed load: ${opts.clients} clients for ${opts.seconds} s`);
        result.mixed_load = await mixedLoad(svc, { clients: Number(opts.clients), seconds: Number(opts.seconds), recallShare: 0.7, seedTurns: 400 });
      }
    } finally {
      await svc.close();
    }
    const out = {
      ...result,
      suite_seconds: Math.round((Date.now() - started) / 1000),
      machine: { cpus: cpus().length, embedding_model: base.embedding.model, embedding_mode: base.embedding.mode },
      goals: { status_5xx_not_503: 0, acknowledged_lost: 0, without_postgres_row: 0, without_audit_row: 0, records_left_after_erasure: 0, stranded_users: 0 },
      note: 'HTTP against an in-process server; PostgreSQL and Redis are private instances of the suite (pg_ctl stop -m fast, redis-cli shutdown nosave); Neo4j is killed with SIGKILL and restarted by `stack up` only with --neo4j-data-dir. Writers retry a turn every 100 ms until it is acknowledged.',
    };
    console.log(JSON.stringify(out, null, 2));
    mkdirSync(dirname(opts.out), { recursive: true });
    writeFileSync(opts.out, JSON.stringify(out, null, 2) + '\n');
  } finally {
    for (const s of stores.reverse()) await s.close().catch((err: unknown) => console.error(`closing ${s.name}:`, err));
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
