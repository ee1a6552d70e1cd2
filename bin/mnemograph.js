#!/usr/bin/env node
// The `mnemograph` command: the compiled CLI when built (`npm run build`), else the
// TypeScript sources through tsx, so a plain `npm ci` checkout works without a build step.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const built = join(__dirname, '..', 'dist', 'cli', 'main.js');
if (existsSync(built)) {
  require(built);
} else {
  require('tsx/cjs');
  require(join(__dirname, '..', 'src', 'cli', 'main.ts'));
}
