import { useInfiniteQuery, useMutation, useQuery } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useMemo, useState } from 'react';
import { call, client, errorText, routes } from '../api';
import { FactRow } from '../components/fact-row';

const route = getRouteApi('/users/$userId');

/**
 * One user's memory as a tree: channels → conversations (→ turns, on their own page, and the
 * session's working memory), entities, facts current and past, goals, strategies.
 */
export function UserPage() {
  const { userId } = route.useParams();
  const conversations = useInfiniteQuery({
    queryKey: ['conversations', userId],
    queryFn: ({ pageParam }) => call(routes.listConversations, { userId, cursor: pageParam, limit: 200 }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const all = useMemo(() => conversations.data?.pages.flatMap((p) => p.conversations) ?? [], [conversations.data]);
  const byChannel = useMemo(() => {
    const m = new Map<string, typeof all>();
    for (const c of all) m.set(c.channel, [...(m.get(c.channel) ?? []), c]);
    return [...m.entries()].sort(([a], [b]) => a.localeCompare(b));
  }, [all]);
  const channels = byChannel.map(([c]) => c).slice(0, 20);
  const exported = useMutation({ mutationFn: () => downloadExport(userId) });

  return (
    <section>
      <div className="crumbs">
        <Link to="/users">Users</Link> / <strong>{userId}</strong> ·{' '}
        <Link to="/users/$userId/search" params={{ userId }}>
          Search and explain
        </Link>{' '}
        · <Link to="/pools">Pools</Link> ·{' '}
        <button onClick={() => exported.mutate()} disabled={exported.isPending} title="the same JSON lines as `mnemograph export`">
          {exported.isPending ? 'Exporting…' : 'Download export'}
        </button>
        {exported.isSuccess && (
          <span className="muted" data-testid="export-done">
            {' '}
            {exported.data.toLocaleString()} lines
          </span>
        )}
        {exported.isError && <span className="error"> {errorText(exported.error)}</span>}
      </div>
      <div className="tree" data-testid="tree">
        <details open>
          <summary>
            Channels and conversations{' '}
            <span className="muted">
              ({all.length.toLocaleString()}
              {conversations.hasNextPage ? '+' : ''})
            </span>
          </summary>
          {conversations.isError && <p className="error">{errorText(conversations.error)}</p>}
          {byChannel.map(([channel, convs]) => (
            <details key={channel} open className="node">
              <summary>
                #{channel} <span className="muted">({convs.length})</span>
              </summary>
              <ul>
                {convs.map((c) => (
                  <ConversationNode key={c.conversationId} userId={userId} conversation={c} />
                ))}
              </ul>
            </details>
          ))}
          {conversations.hasNextPage && (
            <button onClick={() => void conversations.fetchNextPage()} disabled={conversations.isFetchingNextPage}>
              More conversations
            </button>
          )}
        </details>
        <EntitiesNode userId={userId} />
        <FactsNode userId={userId} />
        <GoalsNode userId={userId} channels={channels} />
        <StrategiesNode userId={userId} />
      </div>
    </section>
  );
}

type Conversation = Awaited<ReturnType<typeof call<typeof routes.listConversations>>>['conversations'][number];

function ConversationNode({ userId, conversation: c }: { userId: string; conversation: Conversation }) {
  const [showSession, setShowSession] = useState(false);
  return (
    <li>
      <Link to="/users/$userId/conversations/$conversationId" params={{ userId, conversationId: c.conversationId }}>
        {c.conversationId}
      </Link>{' '}
      <span className="muted">
        {c.turns.toLocaleString()} turns · {c.lastTurnAt ? new Date(c.lastTurnAt).toLocaleString() : '—'}
        {c.archived ? ' · archived' : ''}
      </span>{' '}
      <button className="link" onClick={() => setShowSession((v) => !v)}>
        working memory
      </button>
      {showSession && <SessionView userId={userId} conversationId={c.conversationId} channel={c.channel} />}
    </li>
  );
}

function SessionView({ userId, conversationId, channel }: { userId: string; conversationId: string; channel: string }) {
  const s = useQuery({ queryKey: ['session', userId, conversationId], queryFn: () => call(routes.getSession, { userId, conversationId, channel }) });
  if (s.isPending) return <p className="muted">Loading…</p>;
  if (s.isError) return <p className="error">{errorText(s.error)}</p>;
  const { recentTurns, context, thoughts, activeGoal } = s.data;
  return (
    <div className="session">
      <div>
        <b>active goal:</b> {activeGoal ? activeGoal.description : <span className="muted">none</span>}
      </div>
      <div>
        <b>context:</b> {Object.keys(context).length === 0 ? <span className="muted">empty</span> : <code>{JSON.stringify(context)}</code>}
      </div>
      <div>
        <b>thoughts:</b> {thoughts.length === 0 ? <span className="muted">none</span> : thoughts.map((t) => t.thought).join(' · ')}
      </div>
      <div>
        <b>recent turns in Redis:</b> {recentTurns.length}
      </div>
    </div>
  );
}

function EntitiesNode({ userId }: { userId: string }) {
  const [q, setQ] = useState('');
  const entities = useInfiniteQuery({
    queryKey: ['entities', userId, q],
    queryFn: ({ pageParam }) => call(routes.listEntities, { userId, q: q || undefined, cursor: pageParam, limit: 100, sort: 'mentions' }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const rows = entities.data?.pages.flatMap((p) => p.entities) ?? [];
  return (
    <details open>
      <summary>
        Entities{' '}
        <span className="muted">
          ({rows.length}
          {entities.hasNextPage ? '+' : ''})
        </span>
      </summary>
      <input className="filter" placeholder="filter by name or alias" value={q} onChange={(e) => setQ(e.target.value)} />
      {entities.isError && <p className="error">{errorText(entities.error)}</p>}
      <ul data-testid="entities">
        {rows.map((e) => (
          <li key={e.id}>
            <Link to="/users/$userId/entities/$entityId" params={{ userId, entityId: e.id }}>
              {e.name}
            </Link>{' '}
            <span className="tag">{e.type}</span> <span className="muted">#{e.channel}</span>
            {e.aliases.length > 0 && <span className="muted"> aka {e.aliases.join(', ')}</span>}
          </li>
        ))}
      </ul>
      {entities.hasNextPage && <button onClick={() => void entities.fetchNextPage()}>More entities</button>}
    </details>
  );
}

function FactsNode({ userId }: { userId: string }) {
  const [status, setStatus] = useState<'current' | 'past'>('current');
  const facts = useInfiniteQuery({
    queryKey: ['facts', userId, status],
    queryFn: ({ pageParam }) => call(routes.listFacts, { userId, status, cursor: pageParam, limit: 100 }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const rows = facts.data?.pages.flatMap((p) => p.facts) ?? [];
  return (
    <details open>
      <summary>Facts</summary>
      <div className="tabs">
        {(['current', 'past'] as const).map((s) => (
          <button key={s} className={s === status ? 'active' : ''} onClick={() => setStatus(s)}>
            {s}
          </button>
        ))}
      </div>
      {facts.isError && <p className="error">{errorText(facts.error)}</p>}
      <ul data-testid={`facts-${status}`}>
        {rows.map((f) => (
          <FactRow key={f.id} userId={userId} fact={f} />
        ))}
        {rows.length === 0 && !facts.isPending && <li className="muted">none</li>}
      </ul>
      {facts.hasNextPage && <button onClick={() => void facts.fetchNextPage()}>More facts</button>}
    </details>
  );
}

function GoalsNode({ userId, channels }: { userId: string; channels: string[] }) {
  const goals = useQuery({
    queryKey: ['goals', userId, channels],
    queryFn: () => call(routes.listActiveGoals, { userId, channels: channels.length > 0 ? channels : undefined, limit: 200 }),
  });
  return (
    <details open>
      <summary>Goals (open)</summary>
      {goals.isError && <p className="error">{errorText(goals.error)}</p>}
      <ul data-testid="goals">
        {goals.data?.goals.map((g) => (
          <li key={g.id}>
            {g.description} <span className="tag">{g.status}</span> <span className="muted">priority {g.priority}</span>
          </li>
        ))}
        {goals.data?.goals.length === 0 && <li className="muted">none</li>}
      </ul>
    </details>
  );
}

function StrategiesNode({ userId }: { userId: string }) {
  const [q, setQ] = useState('');
  const [sort, setSort] = useState<'recent' | 'success' | 'uses'>('recent');
  const strategies = useInfiniteQuery({
    queryKey: ['strategies', userId, q, sort],
    queryFn: ({ pageParam }) => call(routes.listStrategies, { userId, q: q.trim() || undefined, sort, cursor: pageParam, limit: 100 }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const rows = strategies.data?.pages.flatMap((p) => p.strategies) ?? [];
  return (
    <details open>
      <summary>
        Strategies{' '}
        <span className="muted">
          ({rows.length}
          {strategies.hasNextPage ? '+' : ''})
        </span>
      </summary>
      <input className="filter" placeholder="filter by description or task" value={q} onChange={(e) => setQ(e.target.value)} />{' '}
      <select aria-label="sort strategies" value={sort} onChange={(e) => setSort(e.target.value as typeof sort)}>
        <option value="recent">recently used</option>
        <option value="success">success rate</option>
        <option value="uses">most used</option>
      </select>
      {strategies.isError && <p className="error">{errorText(strategies.error)}</p>}
      <ul data-testid="strategies">
        {rows.map((s) => (
          <li key={s.id}>
            {s.description} <span className="muted">{s.toolSequence.join(' → ')}</span> <span className="tag">#{s.channel}</span>{' '}
            <span className="muted">
              success {(s.successRate * 100).toFixed(0)}% ({s.successCount}✓ {s.failureCount}✗)
            </span>
          </li>
        ))}
        {rows.length === 0 && !strategies.isPending && <li className="muted">none</li>}
      </ul>
      {strategies.hasNextPage && <button onClick={() => void strategies.fetchNextPage()}>More strategies</button>}
    </details>
  );
}

/** The user's export (`GET /v1/users/:userId/export`) saved as a JSON-lines file; resolves with its line count. */
async function downloadExport(userId: string): Promise<number> {
  const text = await client().exportUserText(userId);
  const url = URL.createObjectURL(new Blob([text], { type: 'application/x-ndjson' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `mnemograph-export-${userId}.jsonl`;
  a.click();
  URL.revokeObjectURL(url);
  return text.split('\n').filter((l) => l.trim()).length;
}
