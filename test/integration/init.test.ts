import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseEnvFile } from '../../src/config';
import { StackError } from '../../src/errors';
import { neo4jUp } from '../../src/stack/neo4j-process';
import { PgTenantStore } from '../../src/tenancy';
import { openStack, testConfig, type TestStack } from '../support/stack';

const ROOT = join(__dirname, '..', '..');
const EXAMPLE = parseEnvFile(readFileSync(join(ROOT, 'config', 'mnemograph.env.example'), 'utf8'));
const run = promisify(execFile);

/** Runs the real `mnemograph` CLI in `cwd`, with the test environment less what `unset` names; never throws. */
async function cli(cwd: string, args: string[], extra: Record<string, string> = {}, unset: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'silent' };
  for (const name of ['MNEMOGRAPH_ENV_FILE', ...unset]) delete env[name];
  Object.assign(env, extra);
  try {
    const { stdout, stderr } = await run(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'src', 'cli', 'main.ts'), ...args], { cwd, env, timeout: 90_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

let stack: TestStack;
let tenants: PgTenantStore;
beforeAll(() => {
  stack = openStack();
  tenants = new PgTenantStore(stack.pg, 0);
});
afterAll(async () => stack.close());

describe('mnemograph init', () => {
  it('writes config/mnemograph.env from the example with a generated Neo4j password and a working API key, which every command then loads', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'mnemograph-init-'));
    const databaseUrl = stack.config.postgres.url;
    const first = await cli(cwd, ['init', '--database-url', databaseUrl]);
    expect(first).toMatchObject({ code: 0 });
    expect(first.stdout).toContain('wrote config/mnemograph.env');
    const path = join(cwd, 'config', 'mnemograph.env');
    expect(statSync(path).mode & 0o777).toBe(0o600);

    const written = parseEnvFile(readFileSync(path, 'utf8'));
    expect(written.NEO4J_PASSWORD!.length).toBeGreaterThanOrEqual(8);
    expect(written.NEO4J_PASSWORD).not.toBe(EXAMPLE.NEO4J_PASSWORD);
    expect(written.DATABASE_URL).toBe(databaseUrl);
    // Everything else is the example's.
    const rest = (env: Record<string, string>) => Object.fromEntries(Object.entries(env).filter(([k]) => !['NEO4J_PASSWORD', 'DATABASE_URL', 'MNEMOGRAPH_API_KEY'].includes(k)));
    expect(rest(written)).toEqual(rest(EXAMPLE));
    const principal = await tenants.verify(written.MNEMOGRAPH_API_KEY!);
    expect(principal).toMatchObject({ tenantId: 'local' });
    expect(first.stdout).toContain(written.MNEMOGRAPH_API_KEY);

    // A command run in that folder reads DATABASE_URL from the file (it is not in its environment).
    const listed = await cli(cwd, ['keys', 'list', '--tenant', 'local'], {}, ['DATABASE_URL']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(principal!.keyId);
    // ... and from MNEMOGRAPH_ENV_FILE elsewhere; a variable in the environment wins over the file.
    const elsewhere = mkdtempSync(join(tmpdir(), 'mnemograph-init-'));
    expect((await cli(elsewhere, ['keys', 'list', '--tenant', 'local'], { MNEMOGRAPH_ENV_FILE: path }, ['DATABASE_URL'])).stdout).toContain(principal!.keyId);
    const overridden = await cli(elsewhere, ['keys', 'list'], { MNEMOGRAPH_ENV_FILE: path, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    expect(overridden.code).toBe(1);
    expect(overridden.stderr).toContain('127.0.0.1:1');

    // Run again: refused, the file and the keys as they were.
    const before = readFileSync(path, 'utf8');
    const keysBefore = (await tenants.listKeys('local')).length;
    const again = await cli(cwd, ['init', '--database-url', databaseUrl]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/config\/mnemograph\.env: already exists\. Fix: .*--force/);
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(await tenants.listKeys('local')).toHaveLength(keysBefore);

    // --force writes a new password and key.
    expect((await cli(cwd, ['init', '--force', '--database-url', databaseUrl])).code).toBe(0);
    const replaced = parseEnvFile(readFileSync(path, 'utf8'));
    expect(replaced.NEO4J_PASSWORD).not.toBe(written.NEO4J_PASSWORD);
    expect(await tenants.verify(replaced.MNEMOGRAPH_API_KEY!)).toMatchObject({ tenantId: 'local' });
  }, 180_000); // nine CLI processes, each a tsx start: a minute is too little on a busy 2-core machine

  it('changes nothing on bad input, and --no-key writes the file without touching PostgreSQL', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'mnemograph-init-'));
    const bad = await cli(cwd, ['init', '--database-url', 'mysql://nope']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('DATABASE_URL');
    expect(existsSync(join(cwd, 'config'))).toBe(false);

    const unreachable = await cli(cwd, ['init', '--file', 'my.env', '--database-url', 'postgres://postgres@10.255.255.1:5432/x']);
    expect(unreachable.code).toBe(1);
    expect(existsSync(join(cwd, 'my.env'))).toBe(false);

    const noKey = await cli(cwd, ['init', '--file', 'my.env', '--no-key', '--database-url', 'postgres://postgres@10.255.255.1:5432/x']);
    expect(noKey.code).toBe(0);
    expect(noKey.stdout).toContain('mnemograph keys create --tenant local');
    expect(parseEnvFile(readFileSync(join(cwd, 'my.env'), 'utf8')).MNEMOGRAPH_API_KEY).toBe('');
  });

  it('a local Neo4j already running under the old password: `stack up` says to restart it, which applies the new one', async () => {
    // Our "running embedded Neo4j" is this process (its pid in the pid file); Bolt is the shared test Neo4j.
    const dir = mkdtempSync(join(tmpdir(), 'mnemograph-neo4j-'));
    const paths = { project: join(ROOT, 'neo4j'), dataDir: join(dir, 'neo4j'), pidFile: join(dir, 'neo4j.pid'), logFile: join(dir, 'neo4j.out.log') };
    writeFileSync(paths.pidFile, String(process.pid));
    const err = await neo4jUp(paths, testConfig({ NEO4J_PASSWORD: 'generated-by-init-0' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StackError);
    expect((err as Error).message).toBe(
      `the local Neo4j (pid ${process.pid}) was started with another password than NEO4J_PASSWORD (changed by \`mnemograph init\`?); restart it so it takes the new one: \`npm run stack:down\`, then \`npm run stack:up\` or \`npm start\``,
    );
  });
});
