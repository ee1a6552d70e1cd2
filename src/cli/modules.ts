/**
 * The modules a command needs, each loaded when a command first asks for it rather than when
 * the CLI starts, so `--help` or `keys list` does not load the whole service. `require`, not
 * `import()`: a checkout runs the sources through tsx's require hook (bin/mnemograph.js),
 * which `import()` bypasses. Node caches each module after its first load.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const load = <T>(id: string): T => require(id) as T;

export const modules = {
  init: () => load<typeof import('./init-command')>('./init-command'),
  stack: () => load<typeof import('../stack')>('../stack'),
  migrate: () => load<typeof import('../migrate')>('../migrate'),
  migrateCommand: () => load<typeof import('./migrate-command')>('./migrate-command'),
  doctor: () => load<typeof import('./doctor-command')>('./doctor-command'),
  worker: () => load<typeof import('./worker-command')>('./worker-command'),
  service: () => load<typeof import('./service-commands')>('./service-commands'),
  keys: () => load<typeof import('./keys-command')>('./keys-command'),
  user: () => load<typeof import('./user-commands')>('./user-commands'),
  reindex: () => load<typeof import('./reindex-command')>('./reindex-command'),
  auditVerify: () => load<typeof import('./audit-verify-command')>('./audit-verify-command'),
  container: () => load<typeof import('../container')>('../container'),
};
