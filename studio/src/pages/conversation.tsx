import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef, useState } from 'react';
import { call, errorText, routes } from '../api';
import { Confirm } from '../components/confirm';

const route = getRouteApi('/users/$userId/conversations/$conversationId');

const PAGE = 500;
const ROW_HEIGHT = 44;

type Report = Awaited<ReturnType<typeof call<typeof routes.deleteConversation>>>;
type DerivedItem = Report['items'][number];

const KIND_LABEL: Record<DerivedItem['kind'], string> = {
  fact: 'fact',
  relationship: 'relationship',
  entity: 'entity',
  strategy: 'strategy',
  toolInvocation: 'tool call',
  poolEntry: 'shared pool entry',
  profile: 'profile',
};

/** One group of the dry run's items (what goes, what comes back, what stays), each with why. */
function DerivedList({ title, items, testId }: { title: string; items: DerivedItem[]; testId: string }) {
  if (items.length === 0) return null;
  return (
    <div className="derived" data-testid={testId}>
      <h4>
        {title} ({items.length})
      </h4>
      <ul>
        {items.map((i) => (
          <li key={`${i.kind}:${i.id}`}>
            <span className="kind">{KIND_LABEL[i.kind]}</span> {i.label} <span className="muted">— {i.why}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
type Pending = { kind: 'turn'; index: number; report: Report } | { kind: 'conversation'; report: Report };

/**
 * A conversation's turns, paged from the API as the list scrolls and virtualised: however
 * long the conversation (10k+ turns), only the rows in view (and a few around them) are in
 * the DOM. Deleting a turn or the whole conversation asks the API for a dry run first and
 * shows what will go.
 */
export function ConversationPage() {
  const { userId, conversationId } = route.useParams();
  const queries = useQueryClient();
  const navigate = useNavigate();
  const turns = useInfiniteQuery({
    queryKey: ['turns', userId, conversationId],
    queryFn: ({ pageParam }) => call(routes.listTurns, { userId, conversationId, afterIndex: pageParam, limit: PAGE }),
    initialPageParam: -1,
    getNextPageParam: (last) => last.nextAfterIndex ?? undefined,
  });
  const rows = turns.data?.pages.flatMap((p) => p.turns) ?? [];
  const total = turns.data?.pages[0]?.total ?? 0;
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({ count: turns.hasNextPage ? rows.length + 1 : rows.length, getScrollElement: () => scroller.current, estimateSize: () => ROW_HEIGHT, overscan: 10 });
  const items = virtual.getVirtualItems();
  const lastItem = items.at(-1);
  // The next page is fetched when the loader row (one past the loaded ones) scrolls into view.
  useEffect(() => {
    if (lastItem && lastItem.index >= rows.length - 1 && turns.hasNextPage && !turns.isFetchingNextPage) void turns.fetchNextPage();
  }, [lastItem, rows.length, turns]);

  const [pending, setPending] = useState<Pending | null>(null);
  const dryRun = useMutation({
    mutationFn: async (what: { kind: 'turn'; index: number } | { kind: 'conversation' }): Promise<Pending> =>
      what.kind === 'turn'
        ? { ...what, report: await call(routes.deleteTurn, { userId, conversationId, index: what.index, dryRun: true }) }
        : { ...what, report: await call(routes.deleteConversation, { userId, conversationId, dryRun: true }) },
    onSuccess: setPending,
  });
  const remove = useMutation({
    mutationFn: async (p: Pending) => (p.kind === 'turn' ? call(routes.deleteTurn, { userId, conversationId, index: p.index }) : call(routes.deleteConversation, { userId, conversationId })),
    onSuccess: async (_r, p) => {
      setPending(null);
      void queries.invalidateQueries({ queryKey: ['conversations', userId] });
      void queries.invalidateQueries({ queryKey: ['users'] });
      if (p.kind === 'conversation') await navigate({ to: '/users/$userId', params: { userId } });
      else await queries.invalidateQueries({ queryKey: ['turns', userId, conversationId] });
    },
  });

  return (
    <section className="conversation">
      <div className="crumbs">
        <Link to="/users">Users</Link> /{' '}
        <Link to="/users/$userId" params={{ userId }}>
          {userId}
        </Link>{' '}
        / <strong>{conversationId}</strong>
      </div>
      <div className="bar">
        <span data-testid="turn-total">{total.toLocaleString()} turns</span>
        <span className="muted"> · {rows.length.toLocaleString()} loaded</span>
        <button className="danger" onClick={() => dryRun.mutate({ kind: 'conversation' })} disabled={dryRun.isPending}>
          Delete conversation…
        </button>
      </div>
      {turns.isError && <p className="error">{errorText(turns.error)}</p>}
      {dryRun.isError && <p className="error">{errorText(dryRun.error)}</p>}
      <div className="turns" ref={scroller} data-testid="turns">
        <div style={{ height: virtual.getTotalSize(), position: 'relative' }}>
          {items.map((item) => {
            const t = rows[item.index];
            return (
              <div
                key={item.key}
                className={`turn ${t?.role ?? ''}`}
                data-testid="turn-row"
                data-index={t?.index}
                style={{ position: 'absolute', top: 0, left: 0, right: 0, height: ROW_HEIGHT, transform: `translateY(${item.start}px)` }}
              >
                {t ? (
                  <>
                    <span className="idx">#{t.index}</span>
                    <span className="role">{t.role}</span>
                    <span className="content" title={t.content}>
                      {t.content}
                    </span>
                    <span className="time muted">{new Date(t.timestamp).toLocaleString()}</span>
                    <button className="link" onClick={() => dryRun.mutate({ kind: 'turn', index: t.index })} aria-label={`delete turn ${t.index}`}>
                      delete
                    </button>
                  </>
                ) : (
                  <span className="muted">Loading more…</span>
                )}
              </div>
            );
          })}
        </div>
      </div>
      {pending && (
        <Confirm
          title={pending.kind === 'turn' ? `Delete turn #${pending.index}?` : 'Delete this conversation?'}
          confirmLabel={pending.kind === 'turn' ? 'Delete turn' : 'Delete conversation'}
          busy={remove.isPending}
          onCancel={() => setPending(null)}
          onConfirm={() => remove.mutate(pending)}
        >
          <p data-testid="deletion-summary">{pending.report.summary}</p>
          <ul>
            <li>{pending.report.turns.toLocaleString()} turn(s) from Neo4j and the Postgres turn log</li>
            {pending.report.workingMemory && <li>the session&apos;s working memory (Redis)</li>}
          </ul>
          <DerivedList title="Learned only from it: goes too" testId="derived-goes" items={pending.report.items.filter((i) => i.action === 'delete')} />
          <DerivedList title="Current again (what replaced it goes)" testId="derived-restored" items={pending.report.items.filter((i) => i.action === 'restore')} />
          <DerivedList title="Stays" testId="derived-stays" items={pending.report.items.filter((i) => i.action === 'keep')} />
          <p className="muted">This cannot be undone. The deletion is recorded in the audit log with your key (kinds and counts, no content).</p>
          {remove.isError && <p className="error">{errorText(remove.error)}</p>}
        </Confirm>
      )}
    </section>
  );
}
