/**
 * Prometheus' naming rules (https://prometheus.io/docs/practices/naming/ and promtool's
 * `check metrics` lint) over the text exposition format, for tests where promtool is absent.
 */

export interface MetricFamily {
  name: string;
  type: string;
  help: string;
  /** Label names seen on the family's samples. */
  labels: Set<string>;
}

/** The families of a /metrics text (HELP and TYPE lines, and the labels of each sample). */
export function parseExposition(text: string): MetricFamily[] {
  const families = new Map<string, MetricFamily>();
  const family = (name: string) => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, type: 'untyped', help: '', labels: new Set() }));
    return f;
  };
  for (const line of text.split('\n')) {
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      if (meta[1] === 'HELP') family(meta[2]!).help = meta[3] ?? '';
      else family(meta[2]!).type = meta[3] ?? 'untyped';
      continue;
    }
    const sample = /^([^\s{#]+)(\{(.*)\})? /.exec(line);
    if (!sample) continue;
    const name = sample[1]!;
    // A histogram's or summary's samples carry suffixes; they belong to the base family.
    const base = [...families.keys()].find((f) => name === f || (/^_(bucket|sum|count)$/.test(name.slice(f.length)) && name.startsWith(f))) ?? name;
    for (const m of (sample[3] ?? '').matchAll(/([^=,\s]+)="(?:[^"\\]|\\.)*"/g)) family(base).labels.add(m[1]!);
  }
  return [...families.values()];
}

const NON_BASE_UNITS: Record<string, string> = {
  milliseconds: 'seconds',
  microseconds: 'seconds',
  nanoseconds: 'seconds',
  minutes: 'seconds',
  hours: 'seconds',
  days: 'seconds',
  weeks: 'seconds',
  ms: 'seconds',
  sec: 'seconds',
  secs: 'seconds',
  us: 'seconds',
  ns: 'seconds',
  kilobytes: 'bytes',
  megabytes: 'bytes',
  gigabytes: 'bytes',
  kb: 'bytes',
  mb: 'bytes',
  gb: 'bytes',
  kib: 'bytes',
  mib: 'bytes',
  gib: 'bytes',
  bits: 'bytes',
  percent: 'ratio',
};
const BASE_UNITS = ['seconds', 'bytes', 'ratio', 'meters', 'volts', 'amperes', 'joules', 'grams', 'celsius'];
const TYPES = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];

/** Every rule a family breaks, as "name: problem" lines (empty when it follows them all). */
export function namingProblems(f: MetricFamily): string[] {
  const p: string[] = [];
  const say = (msg: string) => p.push(`${f.name}: ${msg}`);
  const parts = f.name.split('_');
  if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(f.name)) say('not a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)');
  if (f.name.includes(':')) say('colons are reserved for recording rules');
  if (/[A-Z]/.test(f.name)) say('use snake_case, not camelCase');
  if (!f.help.trim()) say('no HELP text');
  if (f.type === 'counter' && !f.name.endsWith('_total')) say('counter metrics should have "_total" suffix');
  if (f.type !== 'counter' && f.type !== 'untyped' && f.name.endsWith('_total')) say('non-counter metrics should not have "_total" suffix');
  if ((f.type === 'histogram' || f.type === 'summary') && /_(count|sum|bucket)$/.test(f.name)) say(`${f.type} names must not end in _count, _sum or _bucket`);
  for (const t of TYPES) if (parts.slice(1).includes(t)) say(`metric names should not include the type ("${t}")`);
  for (const part of parts) {
    const base = NON_BASE_UNITS[part.toLowerCase()];
    if (base) say(`use base units: "${part}" should be ${base}`);
  }
  // A unit is the suffix (before _total on a counter): x_seconds, x_seconds_total; not x_seconds_y.
  const unitAt = parts.findIndex((s) => BASE_UNITS.includes(s));
  if (unitAt >= 0) {
    const rest = parts.slice(unitAt + 1).join('_');
    if (rest !== '' && !(f.type === 'counter' && rest === 'total')) say(`the unit "${parts[unitAt]}" must be the suffix (before _total on a counter)`);
  }
  for (const l of f.labels) {
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(l)) say(`label "${l}" is not a valid label name`);
    if (l.startsWith('__')) say(`label "${l}" uses the reserved __ prefix`);
    if (/[A-Z]/.test(l)) say(`label "${l}": use snake_case`);
    if (l === 'le' && f.type !== 'histogram') say('label "le" is reserved for histogram buckets');
    if (l === 'quantile' && f.type !== 'summary') say('label "quantile" is reserved for summaries');
  }
  return p;
}
