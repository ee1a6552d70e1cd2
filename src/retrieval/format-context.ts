import { countTokens } from 'gpt-tokenizer/cjs/encoding/o200k_base';
import type { MemoryBundle, RecalledItem } from './contract';

export interface FormatOptions {
  /** Hard ceiling on the block's size in o200k tokens (tags included). */
  tokenBudget?: number;
}

interface Line {
  relevance: number;
  /** The citeable head ("- [turn:id] date speaker:"), never shortened. */
  head: string;
  body: string;
}

const OPEN = '<memory-context>';
const CLOSE = '</memory-context>';
const HEADER = 'Memories relevant to this request, most relevant first. Cite them by [id].';

/**
 * Renders a bundle as a compact block for a system prompt: one line per memory, ids in
 * brackets so answers can cite them, all sources interleaved by weighted relevance, then
 * the profile. Stops before the token budget; a single over-long memory is shortened to
 * fit. Returns '' when the bundle holds nothing (so no empty block reaches the prompt).
 */
export function formatContext(bundle: MemoryBundle, opts: FormatOptions = {}): string {
  const budget = opts.tokenBudget ?? 1_000;
  // The active connections' learned info leads (seed 000 §3.C: deterministic context before
  // retrieved facts), then memories by relevance, then the profile.
  const lines = [...learnedInfoLines(bundle), ...memoryLines(bundle)];
  const profile = profileLine(bundle.profile);
  if (lines.length === 0 && !profile) return '';
  const fixed = countTokens(`${OPEN}\n${HEADER}\n${CLOSE}`) + 2;
  if (fixed >= budget) return '';
  let used = fixed;
  const out: string[] = [];
  for (const line of [...lines, ...(profile ? [profile] : [])]) {
    const text = `${line.head} ${line.body}`;
    const cost = countTokens(text) + 1;
    if (used + cost <= budget) {
      out.push(text);
      used += cost;
      continue;
    }
    // When not even the most relevant memory fits, shorten its body (the id stays whole);
    // the profile, last, is shortened into whatever room is left.
    if (out.length === 0 || line === profile) {
      const room = budget - used - 1 - countTokens(`${line.head} `);
      // A profile squeezed below a few words says nothing; leave it out then.
      const short = out.length === 0 || room >= 8 ? shorten(line.body, room) : undefined;
      if (short) out.push(`${line.head} ${short}`);
    }
    break;
  }
  if (out.length === 0) return '';
  return [OPEN, HEADER, ...out, CLOSE].join('\n');
}

function memoryLines(b: MemoryBundle): Line[] {
  const maxTurn = Math.max(...b.turns.map((t) => t.score), 1e-9);
  const lines: Line[] = b.turns.map((t) => {
    const who = t.turn.metadata.speaker ?? t.turn.role;
    return {
      relevance: b.turns.length > 0 ? 0.3 * (t.score / maxTurn) + 1e-6 : 0,
      head: `- [turn:${t.turn.id}] ${t.turn.timestamp.slice(0, 10)} ${who}:`,
      body: oneLine(t.turn.content),
    };
  });
  // A current fact whose predicate also has a past value here says it is the current one.
  const changed = new Set(b.facts.filter((f) => f.temporal === 'past' && typeof f.data?.predicate === 'string').map((f) => f.data!.predicate));
  for (const item of [...b.facts, ...b.entities, ...b.strategies, ...b.goals, ...(b.pools ?? [])]) {
    lines.push({ relevance: item.relevance, head: `- [${item.kind}:${item.id}]`, body: `${oneLine(item.text)}${annotation(item, changed)}` });
  }
  // Stable: within equal relevance, the order of the sources above.
  return lines
    .map((l, i) => ({ l, i }))
    .sort((a, b) => b.l.relevance - a.l.relevance || a.i - b.i)
    .map((x) => x.l);
}

/** One line per active connection with learned info: `- [connection:<id>] learned info: key: value; ...`. */
function learnedInfoLines(b: MemoryBundle): Line[] {
  return (b.learnedInfo ?? [])
    .filter((l) => Object.keys(l.info).length > 0)
    .map((l) => ({
      relevance: Number.POSITIVE_INFINITY,
      head: `- [connection:${l.connectionId}] learned info:`,
      body: Object.entries(l.info)
        .map(([k, v]) => `${k.replace(/_/g, ' ')}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join('; '),
    }));
}

/**
 * The few words after an item that change how it reads: a fact no longer current (with its
 * end: "past, until 2024-10-01", or "past, ended 2024-10-01" for the statement that ended a
 * state), the current value of something that changed ("current, since ..."), a goal's
 * urgency, a strategy's record, an entity's links.
 */
function annotation(item: RecalledItem, changed: ReadonlySet<unknown>): string {
  const d = item.data ?? {};
  const parts: string[] = [];
  const day = (v: unknown) => (typeof v === 'string' ? v.slice(0, 10) : undefined);
  if (item.kind === 'fact' && item.temporal === 'past') {
    const end = day(d.validTo);
    parts.push(end ? `past, ${d.ends === true ? 'ended' : 'until'} ${end}` : 'past');
  } else if (item.kind === 'fact' && item.temporal === 'future') {
    parts.push('future');
  } else if (item.kind === 'fact' && item.temporal === 'current' && changed.has(d.predicate)) {
    const since = day(d.validFrom);
    parts.push(since ? `current, since ${since}` : 'current');
  }
  if (item.kind === 'goal') {
    if (typeof d.priority === 'number') parts.push(`priority ${d.priority}`);
    if (d.status === 'blocked') parts.push('blocked');
    if (typeof d.deadline === 'string') parts.push(`due ${d.deadline.slice(0, 10)}`);
  }
  if (item.kind === 'strategy') {
    if (Array.isArray(d.toolSequence) && d.toolSequence.length > 0) parts.push(`tools: ${d.toolSequence.join(' → ')}`);
    if (typeof d.successRate === 'number') parts.push(`${Math.round(d.successRate * 100)}% success`);
  }
  if (item.kind === 'pool') {
    if (typeof d.poolName === 'string') parts.push(`pool ${d.poolName}`);
    if (typeof d.entryKind === 'string') parts.push(d.entryKind);
  }
  if (item.related?.length) parts.push(`related: ${item.related.map((r) => `${r.relation} ${r.text}`).join('; ')}`);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

/**
 * The profile's keys as one line (lists comma-joined). The narrative restates the keys at
 * length, so it is shown only when the profile has nothing else.
 */
function profileLine(profile: Record<string, unknown> | null): Line | undefined {
  if (!profile) return undefined;
  const present = (v: unknown) => v !== null && v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0);
  let entries = Object.entries(profile).filter(([, v]) => present(v));
  if (entries.some(([k]) => k !== 'narrative')) entries = entries.filter(([k]) => k !== 'narrative');
  if (entries.length === 0) return undefined;
  const value = (v: unknown): string => (typeof v === 'string' ? v : Array.isArray(v) ? v.map(value).join(', ') : JSON.stringify(v));
  return { relevance: 0, head: '- [profile]', body: entries.map(([k, v]) => `${k.replace(/_/g, ' ')}: ${value(v)}`).join('; ') };
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** The longest prefix of `line` (ending in an ellipsis) within `tokens`, or undefined. */
function shorten(line: string, tokens: number): string | undefined {
  if (tokens < 2) return undefined;
  let lo = 0;
  let hi = line.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (countTokens(`${line.slice(0, mid)}…`) <= tokens) lo = mid;
    else hi = mid - 1;
  }
  return lo > 0 ? `${line.slice(0, lo)}…` : undefined;
}
