import { spawnSync } from 'node:child_process';
import { namingProblems, parseExposition } from '../support/metric-names';
import { uid } from '../support/stack';
import { openHarness, seedUser, type Harness } from './api-harness';

/**
 * prom-client's default Node.js metrics that break a naming rule: gauges named `_total`.
 * They keep their stock names, which the stock Node.js dashboards query.
 */
const STOCK_EXCEPTIONS = new Set(['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']);

let h: Harness;
let text: string;
const started = Date.now() / 1000;
beforeAll(async () => {
  h = await openHarness();
  // Traffic and a finished job run, so every family has samples (labels included).
  const t = await h.tenant();
  const u = await seedUser(h, t.key);
  await h.call(t.key, 'POST', '/v1/recall', { userId: u.userId, query: 'Lisbon' });
  await h.call(t.key, 'GET', `${u.s}/context/none`);
  expect((await h.m.createWorker().runJob('decay', { userIds: [uid('u')] })).status).toBe('succeeded');
  text = String((await h.call(undefined, 'GET', '/metrics')).body);
});
afterAll(async () => h.close());

describe('/metrics names', () => {
  it("follow Prometheus' naming rules (name, type suffixes, base units as suffix, labels); only the stock Node.js gauges named _total are exempt", () => {
    const families = parseExposition(text);
    expect(families.length).toBeGreaterThan(20);
    const problems = families.flatMap((f) => (STOCK_EXCEPTIONS.has(f.name) ? [] : namingProblems(f)));
    expect(problems).toEqual([]);
    for (const name of STOCK_EXCEPTIONS) expect(families.find((f) => f.name === name)?.type ?? 'gauge').toBe('gauge');
  });

  it('default process and Node.js metrics carry their stock names, unprefixed', () => {
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_start_time_seconds', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(text).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
    }
    expect(text).not.toMatch(/mnemograph_process_/);
  });

  it('job items are a counter of every finished run, and the last success a Unix timestamp', () => {
    expect(text).toMatch(/^# TYPE mnemograph_job_items_total counter$/m);
    expect(text).toMatch(/^mnemograph_job_items_total\{job="decay",stat="[a-zA-Z]+"\} \d+/m);
    expect(text).not.toMatch(/_24h|_age_seconds/);
    const at = Number(/^mnemograph_job_last_success_timestamp_seconds\{job="decay"\} (\S+)$/m.exec(text)?.[1]);
    expect(at).toBeGreaterThanOrEqual(Math.floor(started) - 1);
    expect(at).toBeLessThanOrEqual(Date.now() / 1000 + 1);
  });

  const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
  (promtool.status === 0 ? it : it.skip)('pass `promtool check metrics` (Debian package prometheus), but for the stock Node.js gauges', () => {
    const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    const complaints = `${r.stdout}${r.stderr}`
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    const named = complaints.map((l) => l.split(/\s+/)[0]!);
    expect(named.filter((n) => !STOCK_EXCEPTIONS.has(n))).toEqual([]);
  });
});
