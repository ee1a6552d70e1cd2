import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useState } from 'react';
import { call, errorText, routes, useWhoAmI } from '../api';

/*
 * Shared memory pools (src/pools) through the pool routes: the pools the key may read, one
 * pool's grants, counts and entries (paged), an entry's version history. A key that may
 * administer the pool (an admin key, or the owner agent's) grants and revokes; a key with
 * write access restores a version. The API decides (403/404 when not allowed) and audits every
 * change with the key as actor; the page only hides buttons that would be refused.
 */

export function PoolsPage() {
  const pools = useQuery({ queryKey: ['pools'], queryFn: () => call(routes.listPools, {}) });
  return (
    <section data-testid="pools">
      <h2>Memory pools</h2>
      {pools.isError && <p className="error">{errorText(pools.error)}</p>}
      <table>
        <thead>
          <tr>
            <th>pool</th>
            <th>type</th>
            <th>owner</th>
            <th>readers</th>
            <th>writers</th>
          </tr>
        </thead>
        <tbody>
          {pools.data?.pools.map((p) => (
            <tr key={p.id}>
              <td>
                <Link to="/pools/$poolId" params={{ poolId: p.id }}>
                  {p.name}
                </Link>{' '}
                <span className="muted">{p.id}</span>
              </td>
              <td>
                <span className="tag">{p.type}</span>
              </td>
              <td>{p.ownerAgent ?? <span className="muted">tenant</span>}</td>
              <td>{p.access.publicRead ? 'everyone' : p.access.read.join(', ') || '—'}</td>
              <td>{p.access.write.join(', ') || '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {pools.data?.pools.length === 0 && <p className="muted">This key may read no pool.</p>}
    </section>
  );
}

const poolRoute = getRouteApi('/pools/$poolId');

export function PoolPage() {
  const { poolId } = poolRoute.useParams();
  const who = useWhoAmI();
  const queries = useQueryClient();
  const pool = useQuery({ queryKey: ['pool', poolId], queryFn: () => call(routes.getPool, { poolId }) });
  const stats = useQuery({ queryKey: ['pool-stats', poolId], queryFn: () => call(routes.poolStats, { poolId }) });
  const entries = useInfiniteQuery({
    queryKey: ['pool-entries', poolId],
    queryFn: ({ pageParam }) => call(routes.listPoolEntries, { poolId, cursor: pageParam, limit: 50 }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const [open, setOpen] = useState<string | null>(null);
  const [agent, setAgent] = useState('');
  const [level, setLevel] = useState<'read' | 'write'>('read');
  const refresh = () => queries.invalidateQueries({ queryKey: ['pool', poolId] });
  const grant = useMutation({ mutationFn: () => call(routes.grantPoolAccess, { poolId, agentId: agent.trim(), level }), onSuccess: refresh });
  const revoke = useMutation({ mutationFn: (agentId: string) => call(routes.revokePoolAccess, { poolId, agentId }), onSuccess: refresh });

  if (pool.isError) return <p className="error">{errorText(pool.error)}</p>;
  if (!pool.data || !who.data) return <p className="muted">Loading…</p>;
  const p = pool.data;
  const me = who.data;
  const administers = me.role === 'admin' || (me.agentId !== null && me.agentId === p.ownerAgent);
  const writes = administers || (me.agentId !== null && p.access.write.includes(me.agentId));
  const grantees = [...new Set([...p.access.read, ...p.access.write])].sort();
  const rows = entries.data?.pages.flatMap((pg) => pg.entries) ?? [];
  return (
    <section data-testid="pool">
      <div className="crumbs">
        <Link to="/pools">Pools</Link> / <strong>{p.name}</strong> <span className="tag">{p.type}</span> <span className="muted">owner {p.ownerAgent ?? 'the tenant'}</span>
      </div>
      {stats.data && (
        <p className="muted" data-testid="pool-stats">
          {stats.data.entries} entries · {stats.data.archived} archived · {stats.data.versions} versions · {stats.data.snapshots} snapshots · {stats.data.accessCount} reads
        </p>
      )}
      <h3>Grants</h3>
      <ul data-testid="grants">
        <li>
          public read: <b>{p.access.publicRead ? 'yes' : 'no'}</b>
        </li>
        {grantees.map((a) => (
          <li key={a} data-testid="grant">
            {a} <span className="tag">{p.access.write.includes(a) ? 'write' : 'read'}</span>{' '}
            {administers && (
              <button onClick={() => revoke.mutate(a)} disabled={revoke.isPending}>
                revoke {a}
              </button>
            )}
          </li>
        ))}
        {grantees.length === 0 && <li className="muted">no grants</li>}
      </ul>
      {administers && (
        <form
          className="filters"
          onSubmit={(e) => {
            e.preventDefault();
            grant.mutate();
          }}
        >
          <input aria-label="grant agent" placeholder="agent id" value={agent} onChange={(e) => setAgent(e.target.value)} />
          <select aria-label="grant level" value={level} onChange={(e) => setLevel(e.target.value as 'read' | 'write')}>
            <option value="read">read</option>
            <option value="write">write</option>
          </select>
          <button type="submit" disabled={!agent.trim() || grant.isPending}>
            Grant
          </button>
        </form>
      )}
      {grant.isError && <p className="error">{errorText(grant.error)}</p>}
      {revoke.isError && <p className="error">{errorText(revoke.error)}</p>}
      <h3>Entries</h3>
      {entries.isError && <p className="error">{errorText(entries.error)}</p>}
      <ul data-testid="pool-entries">
        {rows.map((e) => (
          <li key={e.id} data-testid="pool-entry">
            <span className="tag">{e.kind}</span> {e.content} <span className="muted">v{e.version}</span>
            {e.userId && <span className="muted"> · about {e.userId}</span>}{' '}
            <button className="link" onClick={() => setOpen(open === e.id ? null : e.id)}>
              history
            </button>
            {open === e.id && <History poolId={poolId} entryId={e.id} current={e.version} writes={writes} />}
          </li>
        ))}
        {rows.length === 0 && !entries.isPending && <li className="muted">no entries</li>}
      </ul>
      {entries.hasNextPage && (
        <button onClick={() => void entries.fetchNextPage()} disabled={entries.isFetchingNextPage}>
          More entries
        </button>
      )}
    </section>
  );
}

function History({ poolId, entryId, current, writes }: { poolId: string; entryId: string; current: number; writes: boolean }) {
  const queries = useQueryClient();
  const versions = useQuery({ queryKey: ['pool-history', poolId, entryId, current], queryFn: () => call(routes.poolEntryHistory, { poolId, entryId }) });
  const restore = useMutation({
    mutationFn: (version: number) => call(routes.restorePoolEntryVersion, { poolId, entryId, version }),
    onSuccess: async () => {
      await Promise.all([queries.invalidateQueries({ queryKey: ['pool-entries', poolId] }), queries.invalidateQueries({ queryKey: ['pool-stats', poolId] })]);
    },
  });
  if (versions.isError) return <p className="error">{errorText(versions.error)}</p>;
  return (
    <ol className="versions" data-testid="versions">
      {versions.data?.versions.map((v) => (
        <li key={v.version}>
          v{v.version} <span className="tag">{v.change}</span> “{v.content}” <span className="muted">{new Date(v.at).toLocaleString()}</span>
          {writes && v.version !== current && (
            <>
              {' '}
              <button onClick={() => restore.mutate(v.version)} disabled={restore.isPending}>
                restore v{v.version}
              </button>
            </>
          )}
        </li>
      ))}
      {restore.isError && <li className="error">{errorText(restore.error)}</li>}
    </ol>
  );
}
