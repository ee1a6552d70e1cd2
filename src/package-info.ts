import { readFileSync } from 'node:fs';
import { join, sep } from 'node:path';

/** The package's folder: a checkout, or `node_modules/mnemograph` when installed. */
export const PACKAGE_ROOT: string = join(__dirname, '..');

/** What the code reads from its own package.json. */
export interface PackageInfo {
  name: string;
  version: string;
  /** Packages npm installs when it can and `--omit=optional` leaves out (USE-lite's runtime). */
  optionalDependencies: Record<string, string>;
}

/**
 * The package's package.json, read once: `src/../package.json` in a checkout (tsx, ts-jest)
 * and `dist/../package.json` in a build or an installed copy, so the CLI, the OpenAPI
 * document and the MCP server never carry a version of their own.
 */
export const PACKAGE: PackageInfo = (() => {
  const raw = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as Partial<PackageInfo>;
  return { name: raw.name ?? 'mnemograph', version: raw.version ?? '0.0.0', optionalDependencies: raw.optionalDependencies ?? {} };
})();

/** The package's version (package.json), as `mnemograph --version` prints it. */
export const VERSION: string = PACKAGE.version;

/**
 * Where relative data paths (MNEMOGRAPH_DATA_DIR, AUDIT_SPOOL_DIR) resolve: the checkout
 * itself, or the working directory when the package is installed under node_modules, so
 * Neo4j's data and the audit spool never land where a reinstall deletes them.
 */
export function dataRoot(packageRoot: string = PACKAGE_ROOT, cwd: string = process.cwd()): string {
  return packageRoot.split(sep).includes('node_modules') ? cwd : packageRoot;
}
