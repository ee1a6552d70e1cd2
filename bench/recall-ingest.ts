import type { Mnemograph } from '../src/container';
import { turnKey, type BenchConversation, type BenchDataset } from './recall-datasets';

/**
 * How a benchmark names what it stores: every user and conversation id starts with the
 * run's prefix (`<prefix>-<conversation key>`, `<prefix>-<session key>`), so a stored turn
 * maps back to its dataset key and the run's data is found (and deleted) by its prefix.
 */
export class RunIds {
  constructor(readonly prefix: string) {}

  user(convKey: string): string {
    return `${this.prefix}-${convKey}`;
  }

  conversation(sessionKey: string): string {
    return `${this.prefix}-${sessionKey}`;
  }

  /** A stored turn's key in the dataset (`<session key>#<index>`). */
  keyOf(t: { conversationId: string; index: number }): string {
    return turnKey(t.conversationId.slice(this.prefix.length + 1), t.index);
  }
}

/**
 * Ingests a dataset through the real write path (storeTurns): one call per session, sessions
 * in order; a turn's timestamp is its session's (plus its position in seconds, so the order
 * within a session is kept). Conversations are independent users: two are ingested at a
 * time, one per embedding worker thread (the local embedder runs two).
 */
export async function ingestDataset(m: Mnemograph, ds: BenchDataset, ids: RunIds, onTurns?: (n: number) => void): Promise<void> {
  const ingestConversation = async (conv: BenchConversation) => {
    for (const session of conv.sessions) {
      if (session.turns.length === 0) continue;
      const base = Date.parse(session.date);
      await m.memory.storeTurns(
        session.turns.map((t, i) => ({
          userId: ids.user(conv.key),
          conversationId: ids.conversation(session.key),
          index: i,
          role: t.role,
          content: t.content,
          timestamp: new Date(base + i * 1000).toISOString(),
          metadata: { speaker: t.speaker, sessionId: session.key, source: `bench-${ds.name}` },
        })),
      );
      onTurns?.(session.turns.length);
    }
  };
  const queue = [...ds.conversations];
  const lane = async () => {
    for (let conv = queue.shift(); conv; conv = queue.shift()) await ingestConversation(conv);
  };
  await Promise.all([lane(), lane()]);
}

/** The moment a question is asked: the record's own date, or a day after its conversation's last session. */
export function askedAt(ds: BenchDataset): (q: BenchDataset['questions'][number]) => string {
  const lastDate = new Map(ds.conversations.map((c) => [c.key, c.sessions[c.sessions.length - 1]?.date ?? new Date().toISOString()]));
  return (q) => q.askedAt ?? new Date(Date.parse(lastDate.get(q.conversationKey)!) + 86_400_000).toISOString();
}
