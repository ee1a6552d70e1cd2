import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { envFilePath, loadConfig, parseEnvFile } from '../config';
import { ConfigError } from '../errors';
import { createPgPool } from '../infra/postgres';
import { REPO_ROOT, runPostgresMigrations } from '../migrate';
import { postgresUp } from '../stack/services';
import { PgTenantStore, TenantIdSchema } from '../tenancy';
import { parseInput } from '../schemas';

export interface InitOptions {
  /** Where to write; default MNEMOGRAPH_ENV_FILE, else config/mnemograph.env under the working directory. */
  file?: string;
  /** Replace an existing file (its API key stays valid until revoked). */
  force?: boolean;
  /** Create the first API key (default); false writes the file only, e.g. before PostgreSQL is set up. */
  key: boolean;
  /** Written as DATABASE_URL (e.g. with the password Debian's PostgreSQL asks for). */
  databaseUrl?: string;
  /** The tenant the key is for. */
  tenant: string;
}

export interface InitResult {
  path: string;
  neo4jPassword: string;
  apiKey?: { key: string; id: string; tenantId: string };
}

/** `KEY=value` in an env file's text: the first `KEY=` line replaced, or the line appended. */
export function setEnvValue(text: string, key: string, value: string): string {
  // Quoted when a bare value would end at a `#` or a blank (as Node's env parser reads it).
  let shown = value;
  if (/[\s#"'`\\]/.test(value)) {
    if (value.includes("'")) throw new ConfigError(key, 'holds a single quote, which init cannot write into an env file', 'write the value into the file by hand');
    shown = `'${value}'`;
  }
  const line = new RegExp(`^${key}=.*$`, 'm');
  return line.test(text) ? text.replace(line, () => `${key}=${shown}`) : `${text.replace(/\n*$/, '\n')}${key}=${shown}\n`;
}

/**
 * `mnemograph init`: writes the env file every command loads (see `applyEnvFile`) from
 * config/mnemograph.env.example, with a random Neo4j password and, unless `key` is false,
 * a first API key of `tenant` (PostgreSQL is started when local and down, its database
 * created and migrated, as `stack up` and `migrate` would). Refuses an existing file unless
 * `force`. Nothing is left behind on failure: the file is written last, and a key created
 * for a file that could not be written is revoked. `env` is the environment the file's
 * values are read under (a variable set there wins, as it will at run time).
 */
export async function initCommand(env: Record<string, string | undefined>, opts: InitOptions, cwd = process.cwd()): Promise<InitResult> {
  const path = opts.file ? envFilePath({ MNEMOGRAPH_ENV_FILE: opts.file }, cwd).path : envFilePath(env, cwd).path;
  const shownPath = relative(cwd, path) || path;
  if (existsSync(path) && !opts.force) {
    throw new ConfigError(shownPath, 'already exists', 'edit it, or run `mnemograph init --force` to write a new one (keys it held stay valid until `mnemograph keys revoke`)');
  }
  const tenant = parseInput(TenantIdSchema, opts.tenant, 'tenant');
  const example = join(REPO_ROOT, 'config', 'mnemograph.env.example');
  if (!existsSync(example)) throw new ConfigError('init', `the template ${example} is missing from this installation`, 'reinstall mnemograph');

  const neo4jPassword = randomBytes(18).toString('base64url');
  let text = setEnvValue(readFileSync(example, 'utf8'), 'NEO4J_PASSWORD', neo4jPassword);
  if (opts.databaseUrl !== undefined) text = setEnvValue(text, 'DATABASE_URL', opts.databaseUrl);
  // Validates the file's values before anything is created; --database-url is the one init connects to.
  const config = loadConfig({ ...parseEnvFile(text), ...env, ...(opts.databaseUrl !== undefined ? { DATABASE_URL: opts.databaseUrl } : {}) });

  let apiKey: InitResult['apiKey'];
  let revoke: (() => Promise<unknown>) | undefined;
  const pool = opts.key ? createPgPool(config.postgres.url, 2) : undefined;
  try {
    if (pool) {
      await postgresUp(config);
      await runPostgresMigrations(pool, config, { check: false });
      const tenants = new PgTenantStore(pool, 0);
      const { key, info } = await tenants.createKey(tenant, { name: 'created by mnemograph init' });
      apiKey = { key, id: info.id, tenantId: info.tenantId };
      revoke = () => tenants.revokeKey(info.id);
      text = setEnvValue(text, 'MNEMOGRAPH_API_KEY', key);
    }
    mkdirSync(dirname(path), { recursive: true });
    // Secrets inside: readable by this user only. `wx` refuses a file that appeared meanwhile.
    writeFileSync(path, text, { mode: 0o600, flag: opts.force ? 'w' : 'wx' });
  } catch (err) {
    await revoke?.().catch(() => undefined);
    throw err;
  } finally {
    await pool?.end();
  }
  return { path, neo4jPassword, apiKey };
}

/** What `mnemograph init` prints: where the file is, what it holds, and what to do next. */
export function describeInit(result: InitResult, cwd = process.cwd()): string[] {
  const where = relative(cwd, result.path) || result.path;
  return [
    `wrote ${where} (readable by you only): NEO4J_PASSWORD generated${result.apiKey ? `, MNEMOGRAPH_API_KEY = key ${result.apiKey.id} of tenant "${result.apiKey.tenantId}"` : ', no API key (--no-key)'}`,
    `every mnemograph command run in ${cwd} (npm start too) loads it; elsewhere set MNEMOGRAPH_ENV_FILE=${result.path}`,
    'the local Neo4j takes the new password when it next starts; if one already runs, restart it: npm run stack:down, then npm start',
    result.apiKey ? `your API key: ${result.apiKey.key}` : 'create a key once PostgreSQL answers: mnemograph keys create --tenant local',
  ];
}
