import { existsSync, readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';

/**
 * Where a shared dataset is read from: the given environment variable, else the shared data
 * folder next to the checkout, else the workplace's shared folder (a clean clone may live
 * elsewhere). The files are never copied into the repository (LoCoMo is CC BY-NC).
 */
function sharedDataPath(file: string, envVar: string): string {
  const candidates = [process.env[envVar], resolve(__dirname, '../../shared/data', file), `/work/shared/data/${file}`];
  return candidates.find((p): p is string => p !== undefined && existsSync(p)) ?? candidates[1]!;
}

export const defaultLocomoPath = (): string => sharedDataPath('locomo10.json', 'LOCOMO_PATH');
export const defaultLongMemEvalPath = (): string => sharedDataPath('longmemeval_s_dev.json', 'LONGMEMEVAL_PATH');

/**
 * Recall-benchmark datasets in one shape: conversations (one user each) made of dated
 * sessions, and questions with gold turns and gold sessions. Turn keys are
 * `<session key>#<0-based index in the session>`; the benchmark stores one Mnemograph
 * conversation per session, so a stored turn id maps back to its key.
 */
export interface BenchTurn {
  role: 'user' | 'assistant';
  speaker: string;
  content: string;
}
export interface BenchSession {
  key: string;
  /** ISO timestamp of the session. */
  date: string;
  turns: BenchTurn[];
}
export interface BenchConversation {
  key: string;
  sessions: BenchSession[];
}
export interface BenchQuestion {
  id: string;
  conversationKey: string;
  question: string;
  category: string;
  /** Gold turn keys; empty means "not scored by the main metrics". */
  goldTurns: string[];
  goldSessions: string[];
  /** In the main metrics (LoCoMo: categories 1-4 with a resolvable evidence id). */
  scored: boolean;
  /** LoCoMo's published protocol: gold sessions from the raw `D(\d+):` strings; null when none. */
  publishedGoldSessions?: string[];
  /** When the question is asked (ISO), for relative time expressions. */
  askedAt?: string;
}
export interface BenchDataset {
  name: string;
  conversations: BenchConversation[];
  questions: BenchQuestion[];
}

export const turnKey = (sessionKey: string, index: number) => `${sessionKey}#${index}`;

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** "1:56 pm on 8 May, 2023" -> ISO (UTC). */
export function parseLocomoDate(s: string): string {
  const m = /^(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})$/i.exec(s.trim());
  if (!m) throw new Error(`unparseable LoCoMo date "${s}"`);
  const month = MONTHS.indexOf(m[5]!.toLowerCase());
  if (month < 0) throw new Error(`unknown month in "${s}"`);
  let hour = Number(m[1]) % 12;
  if (m[3]!.toLowerCase() === 'pm') hour += 12;
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]))).toISOString();
}

interface LocomoTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}
interface LocomoQa {
  question: string;
  evidence: string[];
  category: number;
}
interface LocomoSample {
  sample_id: string;
  conversation: Record<string, unknown> & { speaker_a: string; speaker_b: string };
  qa: LocomoQa[];
}

/** Normalised evidence ids per the dataset README: split on ; , whitespace, drop "D:" stray colon, strip leading zeros. */
export function normaliseEvidence(raw: string[]): string[] {
  const out: string[] = [];
  for (const r of raw) {
    for (const part of r.split(/[;,\s]+/)) {
      const m = /^D:?(\d+):0*(\d+)$/.exec(part.trim());
      if (m) out.push(`D${Number(m[1])}:${Number(m[2])}`);
    }
  }
  return [...new Set(out)];
}

export function loadLocomo(path: string): BenchDataset {
  const samples = JSON.parse(readFileSync(path, 'utf8')) as LocomoSample[];
  const conversations: BenchConversation[] = [];
  const questions: BenchQuestion[] = [];
  for (const s of samples) {
    const c = s.conversation;
    const sessionNumbers = Object.keys(c)
      .map((k) => /^session_(\d+)$/.exec(k)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    const sessions: BenchSession[] = sessionNumbers.map((n) => ({
      key: `${s.sample_id}-s${n}`,
      date: parseLocomoDate(String(c[`session_${n}_date_time`])),
      turns: (c[`session_${n}`] as LocomoTurn[]).map((t) => ({
        role: t.speaker === c.speaker_a ? 'user' : 'assistant',
        speaker: t.speaker,
        content: t.blip_caption ? `${t.text} [image: ${t.blip_caption}]` : t.text,
      })),
    }));
    conversations.push({ key: s.sample_id, sessions });
    const diaToKey = new Map<string, string>();
    for (const n of sessionNumbers) {
      (c[`session_${n}`] as LocomoTurn[]).forEach((t, i) => diaToKey.set(t.dia_id, turnKey(`${s.sample_id}-s${n}`, i)));
    }
    s.qa.forEach((qa, i) => {
      const goldTurns = normaliseEvidence(qa.evidence ?? [])
        .map((id) => diaToKey.get(id))
        .filter((k): k is string => k !== undefined);
      const goldSessions = [...new Set(goldTurns.map((k) => k.split('#')[0]!))];
      const published = [...new Set((qa.evidence ?? []).flatMap((e) => [...e.matchAll(/D(\d+):/g)].map((m) => `${s.sample_id}-s${m[1]}`)))];
      questions.push({
        id: `${s.sample_id}-q${i}`,
        conversationKey: s.sample_id,
        question: qa.question,
        category: String(qa.category),
        goldTurns,
        goldSessions,
        scored: qa.category >= 1 && qa.category <= 4 && goldTurns.length > 0,
        publishedGoldSessions: published,
      });
    });
  }
  return { name: 'locomo', conversations, questions };
}

interface LongMemEvalRecord {
  question_id: string;
  question_type: string;
  question: string;
  question_date: string;
  haystack_session_ids: string[];
  haystack_dates: string[];
  haystack_sessions: Array<Array<{ role: string; content: string; has_answer?: boolean }>>;
  answer_session_ids: string[];
}

/** "2023/05/20 (Sat) 02:21" (LongMemEval) or any Date-parseable string -> ISO. */
export function parseLongMemEvalDate(s: string): string {
  const m = /^(\d{4})\/(\d{2})\/(\d{2})(?:\s*\([A-Za-z]+\))?\s*(\d{2}):(\d{2})/.exec(s.trim());
  if (m) return new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]))).toISOString();
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) throw new Error(`unparseable LongMemEval date "${s}"`);
  return d.toISOString();
}

/**
 * Each record is its own user holding all its haystack sessions; `_abs` questions are skipped.
 * The dataset is named after its file (results go to recall-<name>.json).
 */
export function loadLongMemEval(path: string): BenchDataset {
  const records = JSON.parse(readFileSync(path, 'utf8')) as LongMemEvalRecord[];
  const conversations: BenchConversation[] = [];
  const questions: BenchQuestion[] = [];
  for (const r of records) {
    if (r.question_id.endsWith('_abs')) continue;
    const convKey = safeKey(r.question_id);
    const goldTurns: string[] = [];
    const sessions: BenchSession[] = r.haystack_sessions.map((turns, si) => {
      const key = `${convKey}-${safeKey(r.haystack_session_ids[si] ?? `s${si}`)}`;
      // Empty turns cannot be stored; gold indexes count the stored turns only.
      const kept = turns.filter((t) => t.content.trim().length > 0);
      kept.forEach((t, ti) => {
        if (t.has_answer) goldTurns.push(turnKey(key, ti));
      });
      return {
        key,
        date: parseLongMemEvalDate(r.haystack_dates[si] ?? r.question_date),
        turns: kept.map((t) => ({ role: t.role === 'assistant' ? 'assistant' : 'user', speaker: t.role === 'assistant' ? 'assistant' : 'user', content: t.content })),
      };
    });
    sessions.sort((a, b) => a.date.localeCompare(b.date));
    conversations.push({ key: convKey, sessions });
    const goldSessions = r.answer_session_ids.map((id) => `${convKey}-${safeKey(id)}`);
    questions.push({
      id: r.question_id,
      conversationKey: convKey,
      question: r.question,
      category: r.question_type,
      goldTurns,
      goldSessions,
      scored: goldTurns.length > 0 || goldSessions.length > 0,
      askedAt: parseLongMemEvalDate(r.question_date),
    });
  }
  return { name: basename(path).replace(/\.json$/i, ''), conversations, questions };
}

/** Ids become Mnemograph conversation ids: letters, digits, _ . - only. */
function safeKey(s: string): string {
  return s.replace(/[^A-Za-z0-9_.-]/g, '_');
}
