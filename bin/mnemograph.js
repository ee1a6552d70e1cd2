#!/usr/bin/env node
// The `mnemograph` command. An installed package (and the Docker image) runs the compiled
// CLI in dist/, which `npm pack` builds (prepack); it never needs tsx. A checkout without a
// build runs the TypeScript sources through tsx, a dev dependency, so `npm ci` is enough.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const built = join(__dirname, '..', 'dist', 'cli', 'main.js');
if (existsSync(built)) {
  require(built);
} else {
  try {
    require.resolve('tsx/cjs');
  } catch {
    console.error('mnemograph: neither dist/cli/main.js nor tsx was found; build the package with `npm run build` (or install the dev dependencies with `npm ci`)');
    process.exit(1);
  }
  require('tsx/cjs');
  require(join(__dirname, '..', 'src', 'cli', 'main.ts'));
}
