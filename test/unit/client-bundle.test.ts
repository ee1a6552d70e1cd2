import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Metafile, type Plugin } from 'esbuild';

/**
 * `mnemograph/client` must run in a browser, an edge runtime or a slim container: it may
 * load zod, its own files and the API's wire contract (route definitions and the zod-only
 * schema modules), nothing else. The bundle is built as a browser would get it.
 */
const ROOT = join(__dirname, '..', '..');

/** The wire contract: every src/ file the client may reach. Each imports only zod and these. */
const ALLOWED = new Set([
  'src/client/index.ts',
  'src/client/errors.ts',
  'src/api/contract.ts',
  'src/access/roles.ts',
  'src/api/route-defs.ts',
  'src/api/knowledge-route-defs.ts',
  'src/api/pool-route-defs.ts',
  'src/pools/schema.ts',
  'src/api/browse-route-defs.ts',
  'src/browse/schema.ts',
  'src/api/schemas.ts',
  'src/schemas.ts',
  'src/errors.ts',
  'src/episodic/schema.ts',
  'src/retrieval/schema.ts',
  'src/semantic/schema.ts',
  'src/procedural/schema.ts',
  'src/goals/schema.ts',
  'src/observations/schema.ts',
  'src/working/schema.ts',
  'src/api/tier-route-defs.ts',
  'src/short-term/schema.ts',
  'src/settings/schema.ts',
  'src/tiers/schema.ts',
  'src/audit/schema.ts',
  'src/api/audit-route-defs.ts',
  'src/api/ops-route-defs.ts',
  'src/ops/schema.ts',
]);

/** Leaves every package but zod out of the bundle, so the metafile names each one and who imports it. */
const onlyZod: Plugin = {
  name: 'only-zod',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path === 'zod' || args.path.startsWith('zod/') ? undefined : { path: args.path, external: true }));
  },
};

describe('client bundle', () => {
  let metafile: Metafile;
  beforeAll(async () => {
    const result = await build({
      entryPoints: [join(ROOT, 'src/client/index.ts')],
      absWorkingDir: ROOT,
      platform: 'browser',
      bundle: true,
      write: false,
      metafile: true,
      minify: true,
      format: 'esm',
      logLevel: 'silent',
      plugins: [onlyZod],
    });
    metafile = result.metafile;
  });

  it('imports no Node built-in and no package but zod', () => {
    const foreign = Object.entries(metafile.inputs).flatMap(([file, input]) => input.imports.filter((i) => i.external).map((i) => `${file} imports ${i.path}`));
    expect(foreign).toEqual([]);
    const packages = Object.keys(metafile.inputs).filter((f) => f.includes('node_modules/') && !/node_modules\/zod\//.test(f));
    expect(packages).toEqual([]);
  });

  it('reaches no src/ file outside the zod-only wire contract', () => {
    const src = Object.keys(metafile.inputs).filter((f) => !f.includes('node_modules/'));
    expect(src.filter((f) => !ALLOWED.has(f))).toEqual([]);
    expect(src).toContain('src/api/route-defs.ts');
  });

  it("leaves out zod's locales but English (the contract imports zod as a namespace: `import * as z`)", () => {
    const output = Object.values(metafile.outputs)[0]!;
    const locales = Object.keys(output.inputs).filter((f) => /node_modules\/zod\/.*\/locales\/(?!en\.js$|index\.js$)/.test(f));
    expect(locales).toEqual([]);
  });

  it('uses no Node globals (process, Buffer, require, __dirname)', () => {
    const uses = [...ALLOWED].flatMap((f) => {
      const code = readFileSync(join(ROOT, f), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      return [...code.matchAll(/\b(process|Buffer|require|__dirname|__filename)\b/g)].map((m) => `${f}: ${m[1]}`);
    });
    expect(uses).toEqual([]);
  });
});
