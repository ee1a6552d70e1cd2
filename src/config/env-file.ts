import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError } from '../errors';

/** Where the env file is looked for when MNEMOGRAPH_ENV_FILE is unset, relative to the working directory. */
export const DEFAULT_ENV_FILE = join('config', 'mnemograph.env');

/** The env file a command reads: MNEMOGRAPH_ENV_FILE (must exist), else config/mnemograph.env under `cwd` (optional). */
export function envFilePath(env: Record<string, string | undefined>, cwd = process.cwd()): { path: string; explicit: boolean } {
  const named = env.MNEMOGRAPH_ENV_FILE?.trim();
  return named ? { path: resolve(cwd, named), explicit: true } : { path: resolve(cwd, DEFAULT_ENV_FILE), explicit: false };
}

/** The variables of an env file (`KEY=value` lines, `#` comments, optional quotes), parsed as Node's `--env-file` does. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(parseEnv(text))) if (value !== undefined) out[key] = value;
  return out;
}

/**
 * Fills `env` from the env file (see `envFilePath`) before the configuration is read. A
 * variable already in `env` wins, even when empty, so the environment (a container's,
 * CI's, one command's `FOO=… mnemograph …`) overrides the file. Returns the file and the
 * names it set, or undefined when there is no file at the default path. Throws
 * ConfigError when MNEMOGRAPH_ENV_FILE names a file that does not exist or cannot be read.
 */
export function applyEnvFile(env: Record<string, string | undefined>, cwd = process.cwd()): { path: string; applied: string[] } | undefined {
  const { path, explicit } = envFilePath(env, cwd);
  if (!existsSync(path)) {
    if (!explicit) return undefined;
    throw new ConfigError('MNEMOGRAPH_ENV_FILE', `${path} does not exist`, 'create it with `mnemograph init --file <path>`, or unset MNEMOGRAPH_ENV_FILE to use config/mnemograph.env when present');
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(explicit ? 'MNEMOGRAPH_ENV_FILE' : 'config', `cannot read ${path} (${(err as Error).message})`, 'make the file readable by this user, or move it away');
  }
  const applied: string[] = [];
  for (const [key, value] of Object.entries(parseEnvFile(text))) {
    if (env[key] !== undefined) continue;
    env[key] = value;
    applied.push(key);
  }
  return { path, applied };
}
