import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ConversationUpkeep, EpisodicStore } from '../episodic/contract';
import { errorMessage } from '../errors';
import type { Logger } from '../infra/logger';
import type { MemoryBundle } from '../retrieval';
import type { Neo4jGraphCensus } from '../migrate/graph-census';
import type { JobRunLog } from '../worker/contract';

/** Where the gauges come from: each owning store's own counting operation. */
export interface MetricSources {
  census: Pick<Neo4jGraphCensus, 'nodesPerLabel' | 'relationshipsPerType'>;
  turns: Pick<EpisodicStore, 'countPendingEmbeddings'>;
  conversations: Pick<ConversationUpkeep, 'consolidationBacklog'>;
  jobRuns: Pick<JobRunLog, 'itemTotals' | 'lastRuns'>;
}

/**
 * The Prometheus metrics of one API instance, in its own registry (several apps in one
 * process, as in tests, never collide). Graph gauges are read from Neo4j's count store at
 * scrape time and cached for `graphCacheMs`, so scraping stays cheap. Names follow
 * Prometheus' conventions (test/integration/metric-names.test.ts checks them): base units
 * as suffixes, `_total` on counters only; prom-client's default process and Node.js metrics
 * keep their stock names (process_cpu_seconds_total, nodejs_*), as stock dashboards expect.
 */
export class ApiMetrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly operationDuration: Histogram<'operation' | 'outcome'>;
  readonly workingLookups: Counter<'result'>;
  readonly recallResults: Histogram<'technique'>;
  readonly recallStage: Histogram<'stage'>;
  private readonly graph: Snapshot<{ nodes: Map<string, number>; rels: Map<string, number>; backlog: number; consolidation: { lagSeconds: number; conversations: number } }>;
  private readonly jobs: Snapshot<{ totals: Array<{ job: string; stat: string; total: number }>; lastSuccess: Array<{ job: string; at: Date }> }>;

  constructor(
    private readonly sources: MetricSources,
    private readonly log: Logger,
    graphCacheMs = 30_000,
  ) {
    this.graph = new Snapshot(
      async () => {
        const nodes = await this.sources.census.nodesPerLabel();
        const rels = await this.sources.census.relationshipsPerType();
        const backlog = await this.sources.turns.countPendingEmbeddings();
        const c = await this.sources.conversations.consolidationBacklog();
        const lagSeconds = c.oldest ? Math.max(0, (Date.now() - Date.parse(c.oldest)) / 1000) : 0;
        return { nodes, rels, backlog, consolidation: { lagSeconds, conversations: c.conversations } };
      },
      graphCacheMs,
      (err) => this.log.warn({ subsystem: 'api', err: errorMessage(err) }, 'metrics: graph counts unavailable'),
    );
    this.jobs = new Snapshot(
      async () => {
        const totals = await this.sources.jobRuns.itemTotals();
        const lastSuccess = (await this.sources.jobRuns.lastRuns()).flatMap((r) => (r.lastSuccess ? [{ job: r.job, at: r.lastSuccess }] : []));
        return { totals, lastSuccess };
      },
      graphCacheMs,
      (err) => this.log.warn({ subsystem: 'api', err: errorMessage(err) }, 'metrics: job counters unavailable'),
    );
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.httpDuration = new Histogram({
      name: 'mnemograph_http_request_duration_seconds',
      help: 'HTTP request latency by route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.operationDuration = new Histogram({
      name: 'mnemograph_operation_duration_seconds',
      help: 'latency of facade operations (storeTurn, remember, ...) as served by the API',
      labelNames: ['operation', 'outcome'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.workingLookups = new Counter({
      name: 'mnemograph_working_memory_lookups_total',
      help: 'working-memory context reads by result (hit rate = hit / total)',
      labelNames: ['result'],
      registers,
    });
    this.recallResults = new Histogram({
      name: 'mnemograph_recall_results',
      help: 'results contributed per recall technique (vector, fulltext, graph, ...)',
      labelNames: ['technique'],
      buckets: [0, 1, 2, 5, 10, 20, 50],
      registers,
    });
    this.recallStage = new Histogram({
      name: 'mnemograph_recall_stage_seconds',
      help: 'time per recall stage (embed, fulltext, vector, fuse, ...) as reported by remember()',
      labelNames: ['stage'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5],
      registers,
    });
    const graphCounts = () => this.graph.get();
    const jobStats = () => this.jobs.get();
    new Gauge({
      name: 'mnemograph_consolidation_lag_seconds',
      help: 'age of the oldest conversation activity not yet consolidated (0 when none waits)',
      registers,
      async collect() {
        const g = await graphCounts();
        if (g) this.set(g.consolidation.lagSeconds);
      },
    });
    new Gauge({
      name: 'mnemograph_consolidation_backlog',
      help: 'conversations with turns not yet consolidated',
      registers,
      async collect() {
        const g = await graphCounts();
        if (g) this.set(g.consolidation.conversations);
      },
    });
    // A counter read from worker_job_runs at scrape time: it counts what every worker process
    // did (the worker may run apart from the API), and only grows, as run rows are never deleted.
    new Counter({
      name: 'mnemograph_job_items_total',
      help: 'items worker jobs reported, per job and stat, e.g. job="decay",stat="facts" (decayed facts), job="promote" (promotions); the same total from every API instance',
      labelNames: ['job', 'stat'],
      registers,
      async collect() {
        const j = await jobStats();
        if (!j) return;
        this.reset();
        for (const c of j.totals) if (Number.isFinite(c.total) && c.total >= 0) this.inc({ job: c.job, stat: c.stat }, c.total);
      },
    });
    new Gauge({
      name: 'mnemograph_job_last_success_timestamp_seconds',
      help: 'Unix time each worker job last succeeded (alert on time() - this)',
      labelNames: ['job'],
      registers,
      async collect() {
        const j = await jobStats();
        if (!j) return;
        this.reset();
        for (const s of j.lastSuccess) this.set({ job: s.job }, s.at.getTime() / 1000);
      },
    });
    new Gauge({
      name: 'mnemograph_graph_nodes',
      help: 'Neo4j nodes per label',
      labelNames: ['label'],
      registers,
      async collect() {
        const g = await graphCounts();
        this.reset();
        for (const [label, n] of g?.nodes ?? []) this.set({ label }, n);
      },
    });
    new Gauge({
      name: 'mnemograph_graph_relationships',
      help: 'Neo4j relationships per type',
      labelNames: ['type'],
      registers,
      async collect() {
        const g = await graphCounts();
        this.reset();
        for (const [type, n] of g?.rels ?? []) this.set({ type }, n);
      },
    });
    new Gauge({
      name: 'mnemograph_embedding_backlog',
      help: 'turns stored but not yet embedded (deferred embedding mode)',
      registers,
      async collect() {
        const g = await graphCounts();
        if (g) this.set(g.backlog);
      },
    });
  }

  /** Counts from Neo4j, cached; undefined while Neo4j is unreachable (the scrape still succeeds). */
  /** Per-technique contributions and stage timings of one recall's answer (remember, recall/context). */
  observeRecall(b: MemoryBundle): void {
    const perTechnique = new Map<string, number>();
    for (const t of b.turns) for (const k of Object.keys(t.signals)) perTechnique.set(k, (perTechnique.get(k) ?? 0) + 1);
    for (const kind of ['facts', 'entities', 'strategies', 'goals'] as const) perTechnique.set(kind, b[kind].length);
    for (const [technique, n] of perTechnique) this.recallResults.observe({ technique }, n);
    for (const [stage, ms] of Object.entries(b.timings)) this.recallStage.observe({ stage }, ms / 1000);
  }
}

/**
 * A value read from the stores, kept `maxAgeMs`, read once at a time: the gauges that share it
 * are collected together at a scrape and wait for the same read (each had run the graph census
 * itself). A failed read is reported and keeps the last value.
 */
export class Snapshot<T> {
  private last: { at: number; value: T } | undefined;
  private reading: Promise<T | undefined> | undefined;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly maxAgeMs: number,
    private readonly failed: (err: unknown) => void,
  ) {}

  get(): Promise<T | undefined> {
    if (this.last && Date.now() - this.last.at < this.maxAgeMs) return Promise.resolve(this.last.value);
    this.reading ??= this.read()
      .then(
        (value) => (this.last = { at: Date.now(), value }).value,
        (err: unknown) => (this.failed(err), this.last?.value),
      )
      .finally(() => (this.reading = undefined));
    return this.reading;
  }
}
