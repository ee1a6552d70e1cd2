import { execFile } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cronPeriodMs, doctorCommand, runDoctor } from '../../src/cli/doctor-command';
import { createMnemograph, type Mnemograph } from '../../src/container';
import { JOB_NAMES, DEFAULT_SCHEDULES } from '../../src/worker';
import { testConfig, uid } from '../support/stack';

const ROOT = join(__dirname, '..', '..');
const run = promisify(execFile);

let m: Mnemograph;
beforeAll(async () => {
  m = await createMnemograph(testConfig({ LOG_LEVEL: 'silent' }));
});
afterAll(async () => m.close());

/** Every job run once, for a user nobody else has: the worker's record is fresh. */
async function runEveryJob() {
  const worker = m.createWorker();
  for (const job of JOB_NAMES) expect((await worker.runJob(job, { userIds: [uid('u')] })).status).toBe('succeeded');
}

describe('mnemograph doctor', () => {
  it('reports a failed job with the command that shows its error', async () => {
    const failing = m.createWorker({
      jobs: {
        ...m.jobs,
        decay: () => {
          throw new Error('disk on fire');
        },
      },
    });
    expect((await failing.runJob('decay', { userIds: [uid('u')] })).status).toBe('failed');
    const worker = (await runDoctor(testConfig())).find((c) => c.name === 'worker');
    expect(worker).toMatchObject({ status: 'fail', detail: expect.stringContaining('decay failed'), fix: expect.stringContaining('`mnemograph run-job decay`') });
    expect(worker!.detail).toContain('disk on fire');
  });

  it('says ok to every check on the migrated stack with a worker that ran, one line each, exit 0', async () => {
    await runEveryJob();
    const lines: string[] = [];
    const code = await doctorCommand(testConfig(), (l) => lines.push(l));
    expect(lines.map((l) => l.split(/\s+/).slice(0, 2).join(' '))).toEqual(['ok neo4j', 'ok postgres', 'ok redis', 'ok schema', 'ok embedding', 'ok model', 'ok worker']);
    expect(code).toBe(0);
    expect(lines[0]).toMatch(/Neo4j\/5\.\d+/);
    expect(lines[1]).toMatch(/ok\s+postgres\s+1\d\.\d+/);
    expect(lines[2]).toMatch(/ok\s+redis\s+7\./);
  });

  it('fails a store that does not answer, names the fix, skips what needs it, and the command exits 1', async () => {
    const port = await closedPort();
    const { stdout, code } = await run(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'src', 'cli', 'main.ts'), 'doctor'], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'silent', REDIS_URL: `redis://127.0.0.1:${port}` },
      timeout: 60_000,
    }).then(
      (r) => ({ stdout: r.stdout, code: 0 }),
      (err: { stdout: string; code: number }) => ({ stdout: err.stdout, code: err.code }),
    );
    expect(code).toBe(1);
    expect(stdout).toMatch(
      new RegExp(`^fail\\s+redis\\s+redis://127\\.0\\.0\\.1:${port} does not answer: .*; fix: start it with \`mnemograph stack up\` \\(npm run stack:up\\), or fix REDIS_URL$`, 'm'),
    );
    expect(stdout).toMatch(/^ok\s+neo4j /m);
    expect(stdout).toMatch(/^ok\s+schema /m);
  });

  it('knows the period of each default schedule', () => {
    expect(Object.fromEntries(Object.entries(DEFAULT_SCHEDULES).map(([job, expr]) => [job, cronPeriodMs(expr) / 60_000]))).toEqual({
      consolidate: 15,
      patterns: 60,
      promote: 60,
      decay: 1440,
      cleanup: 1440,
      audit_partitions: 1440,
      pools: 1440,
      short_term: 10,
    });
    expect(cronPeriodMs('0 */6 * * *')).toBe(6 * 3_600_000);
    expect(cronPeriodMs('0 4 * * 1')).toBe(7 * 86_400_000);
  });
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}
