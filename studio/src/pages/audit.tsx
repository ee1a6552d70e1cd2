import { useInfiniteQuery, useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { call, client, errorText, routes, seesAudit, useWhoAmI } from '../api';
import type { RouteInput } from '../../../src/client';

/*
 * The audit log for reviewer (and admin) keys: filters, a timeline, export — the compliance
 * routes `queryAudit` (pages newest first, keyset cursor) and `exportAudit` (a streamed CSV
 * or JSON-lines body) through the typed client.
 */

/** What a person typed into the filters; the server validates them (a bad one is shown as its 400 message). */
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;
type AuditQuery = RouteInput<typeof routes.exportAudit>;
const FILTERS = ['userId', 'operation', 'memoryType', 'channel', 'keyId', 'agentId', 'surface', 'since', 'until', 'success'] as const;

export function AuditPage() {
  const who = useWhoAmI();
  const [draft, setDraft] = useState<Filters>({});
  const [filters, setFilters] = useState<Filters>({});
  const clean = Object.fromEntries(Object.entries(filters).filter(([, v]) => v && v.trim())) as Filters;
  const rows = useInfiniteQuery({
    queryKey: ['audit', clean],
    queryFn: ({ pageParam }) => call(routes.queryAudit, { ...(clean as AuditQuery), cursor: pageParam, limit: '100' }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    enabled: seesAudit(who.data?.role),
  });
  const exportAs = useMutation({ mutationFn: (format: 'csv' | 'jsonl') => download(clean, format) });

  if (!seesAudit(who.data?.role)) return <p className="notice">An {who.data?.role} key does not read the audit log; sign in with a reviewer or admin key.</p>;
  const all = rows.data?.pages.flatMap((p) => p.rows) ?? [];
  return (
    <section data-testid="audit">
      <h2>Audit log</h2>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(draft);
        }}
      >
        {FILTERS.map((f) => (
          <label key={f}>
            {f}
            <input value={draft[f] ?? ''} onChange={(e) => setDraft({ ...draft, [f]: e.target.value })} placeholder={placeholder(f)} aria-label={`filter ${f}`} />
          </label>
        ))}
        <button type="submit">Apply</button>
        <button type="button" onClick={() => exportAs.mutate('csv')} disabled={exportAs.isPending}>
          Export CSV
        </button>
        <button type="button" onClick={() => exportAs.mutate('jsonl')} disabled={exportAs.isPending}>
          Export JSONL
        </button>
      </form>
      {rows.isError && <p className="error">{errorText(rows.error)}</p>}
      {exportAs.isError && <p className="error">{errorText(exportAs.error)}</p>}
      <ol className="audit-timeline" data-testid="audit-rows">
        {all.map((r, i) => {
          const day = r.timestamp.slice(0, 10);
          const newDay = i === 0 || all[i - 1]!.timestamp.slice(0, 10) !== day;
          return (
            <li key={r.id} className={r.success ? '' : 'failed'}>
              {newDay && <div className="day">{day}</div>}
              <span className="when">{new Date(r.timestamp).toLocaleTimeString()}</span> <b>{r.operation}</b> <span className="tag">{r.memoryType}</span> {r.userId && <span>user {r.userId}</span>}{' '}
              {r.channel && <span className="muted">#{r.channel}</span>}{' '}
              <span className="muted">
                by {r.actor.surface ?? '?'} key {r.actor.keyId ?? '—'}
                {r.actor.agentId ? ` agent ${r.actor.agentId}` : ''}
              </span>{' '}
              {r.affectedIds.length > 0 && <span className="muted">· {r.affectedIds.length} item(s)</span>}
              {r.resultCount !== null && <span className="muted"> · {r.resultCount} result(s)</span>}
              {!r.success && <span className="error"> · failed: {r.errorMessage}</span>}
            </li>
          );
        })}
        {!rows.isPending && all.length === 0 && <li className="muted">no rows match</li>}
      </ol>
      {rows.hasNextPage && <button onClick={() => void rows.fetchNextPage()}>Older rows</button>}
    </section>
  );
}

function placeholder(f: string): string {
  if (f === 'since' || f === 'until') return '2026-01-01T00:00:00Z';
  if (f === 'surface') return 'http|mcp|cli|worker';
  if (f === 'success') return 'true|false';
  return '';
}

/** The export route's body as a file (the whole export is read into the page: a reviewer's filtered slice, not months of rows). */
async function download(filters: Filters, format: 'csv' | 'jsonl'): Promise<void> {
  const text = await client().exportAuditText({ ...(filters as AuditQuery), format });
  const url = URL.createObjectURL(new Blob([text], { type: format === 'csv' ? 'text/csv' : 'application/x-ndjson' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `mnemograph-audit.${format}`;
  a.click();
  URL.revokeObjectURL(url);
}
