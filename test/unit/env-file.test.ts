import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyEnvFile, loadConfig, parseEnvFile } from '../../src/config';
import { ConfigError } from '../../src/errors';
import { setEnvValue } from '../../src/cli/init-command';

const EXAMPLE = join(__dirname, '..', '..', 'config', 'mnemograph.env.example');

/** A fresh working directory, with config/mnemograph.env holding `text` when given. */
function workdir(text?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mnemograph-env-'));
  if (text !== undefined) {
    mkdirSync(join(dir, 'config'));
    writeFileSync(join(dir, 'config', 'mnemograph.env'), text);
  }
  return dir;
}

describe('the env file (config/mnemograph.env or MNEMOGRAPH_ENV_FILE)', () => {
  it('fills what the environment does not set; a variable set in the environment wins, even when empty', () => {
    const cwd = workdir('# comment\nPORT=9999\nLOG_LEVEL=debug\nAPI_HOST="0.0.0.0"\nREDIS_KEY_PREFIX=fromfile\n');
    const env: Record<string, string | undefined> = { PORT: '7000', REDIS_KEY_PREFIX: '' };
    const loaded = applyEnvFile(env, cwd);
    expect(loaded).toEqual({ path: join(cwd, 'config', 'mnemograph.env'), applied: expect.arrayContaining(['LOG_LEVEL', 'API_HOST']) });
    expect(loaded!.applied).toHaveLength(2);
    expect(env).toEqual({ PORT: '7000', REDIS_KEY_PREFIX: '', LOG_LEVEL: 'debug', API_HOST: '0.0.0.0' });
    const config = loadConfig(env);
    expect([config.port, config.logLevel, config.api.host, config.redis.keyPrefix]).toEqual([7000, 'debug', '0.0.0.0', '']);
  });

  it('is optional at the default path: no file, nothing changes', () => {
    const env: Record<string, string | undefined> = { PORT: '7000' };
    expect(applyEnvFile(env, workdir())).toBeUndefined();
    expect(env).toEqual({ PORT: '7000' });
  });

  it('reads MNEMOGRAPH_ENV_FILE instead (relative to the working directory), and refuses one that does not exist', () => {
    const cwd = workdir('PORT=1111\n');
    writeFileSync(join(cwd, 'other.env'), 'PORT=2222\n');
    const env: Record<string, string | undefined> = { MNEMOGRAPH_ENV_FILE: 'other.env' };
    applyEnvFile(env, cwd);
    expect(env.PORT).toBe('2222');

    const missing: Record<string, string | undefined> = { MNEMOGRAPH_ENV_FILE: 'nope.env' };
    expect(() => applyEnvFile(missing, cwd)).toThrow(ConfigError);
    expect(() => applyEnvFile(missing, cwd)).toThrow(/MNEMOGRAPH_ENV_FILE: .*nope\.env does not exist.*mnemograph init --file/);
    expect(missing).toEqual({ MNEMOGRAPH_ENV_FILE: 'nope.env' });
  });

  it('the example file, loaded as it is, gives the defaults', () => {
    const example = parseEnvFile(readFileSync(EXAMPLE, 'utf8'));
    expect(Object.keys(example).length).toBeGreaterThan(90);
    expect(example.MNEMOGRAPH_API_KEY).toBe('');
    expect(loadConfig(example)).toEqual(loadConfig({}));
  });
});

describe('setEnvValue (what init writes)', () => {
  it('replaces the first KEY= line or appends one, quoting what a bare value could not carry', () => {
    const text = 'A=1\n# B=old\nB=2\nC=3\n';
    expect(setEnvValue(text, 'B', 'x$&y')).toBe('A=1\n# B=old\nB=x$&y\nC=3\n');
    expect(setEnvValue(text, 'D', 'a b#c')).toBe("A=1\n# B=old\nB=2\nC=3\nD='a b#c'\n");
    expect(parseEnvFile(setEnvValue(text, 'D', 'postgres://u:p#w@h/db')).D).toBe('postgres://u:p#w@h/db');
    expect(() => setEnvValue(text, 'D', "it's")).toThrow(ConfigError);
  });
});
