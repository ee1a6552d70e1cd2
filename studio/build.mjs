// Builds the studio (Vite) into studio/dist. With --if-stale, only when the output is missing
// or older than a source it is built from (the studio, the typed client and the wire contract
// under src/): what `npm start` and the browser tests run, so a fresh clone serves it without
// extra steps and an unchanged tree costs a stat walk (~10 ms).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'studio', 'dist', 'index.html');

/** The newest modification time of the files under `dir` (leaving out `skip`, the build's own output). */
function newest(dir, skip) {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.name === 'node_modules' || entry.name.startsWith('.') || p === skip) continue;
    t = Math.max(t, entry.isDirectory() ? newest(p, skip) : statSync(p).mtimeMs);
  }
  return t;
}

if (process.argv.includes('--if-stale') && existsSync(out)) {
  const built = statSync(out).mtimeMs;
  const sources = Math.max(newest(join(root, 'studio'), join(root, 'studio', 'dist')), newest(join(root, 'src')), statSync(join(root, 'package.json')).mtimeMs);
  if (sources <= built) process.exit(0);
}
// Always a production build: Vite keeps an inherited NODE_ENV (jest sets `test`), which would ship
// React's development build (about 70 KB more gzipped, and slower) to the browser tests.
process.env.NODE_ENV = 'production';
const { build } = await import('vite');
const t0 = performance.now();
await build({ configFile: join(root, 'studio', 'vite.config.mts'), logLevel: 'warn' });
console.log(`studio: built into studio/dist in ${Math.round(performance.now() - t0)} ms`);
