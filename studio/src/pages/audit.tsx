import { useInfiniteQuery, useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import * as z from 'zod';
import { call, client, errorText, routes, seesAudit, storedKey, useWhoAmI } from '../api';
import type { RouteDef } from '../../../src/api/contract';

/*
 * The audit log for reviewer (and admin) keys: filters, a timeline, export.
 *
 * FOR THE LEAD: the audit routes (`queryAudit`, `exportAudit`) are built by the `review`
 * branch against the shared contract. Until that branch is merged, this page uses
 * `QUERY_AUDIT_FALLBACK` below, a definition written from the same contract; once
 * `routes.queryAudit` exists in the route table it is used instead and the fallback can go.
 * Export is a streamed text body, fetched with the same key (the typed client's export
 * method is used when it exists).
 */

const AuditRowSchema = z.looseObject({
  id: z.string(),
  timestamp: z.string(),
  operation: z.string(),
  memoryType: z.string(),
  userId: z.string().nullable(),
  conversationId: z.string().nullable(),
  channel: z.string().nullable(),
  affectedIds: z.array(z.string()),
  queryText: z.string().nullable(),
  resultCount: z.number().nullable(),
  latencyMs: z.number().nullable(),
  success: z.boolean(),
  errorMessage: z.string().nullable(),
  actor: z.looseObject({ tenantId: z.string().nullable(), keyId: z.string().nullable(), agentId: z.string().nullable(), surface: z.string().nullable(), requestId: z.string().nullable() }),
});
type AuditRow = z.output<typeof AuditRowSchema>;

const FILTERS = ['userId', 'operation', 'memoryType', 'channel', 'keyId', 'agentId', 'surface', 'since', 'until', 'success'] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

const QUERY_AUDIT_FALLBACK = {
  id: 'queryAudit',
  method: 'get',
  path: '/v1/audit',
  summary: 'The audit log of the caller’s tenant, newest first',
  tag: 'audit',
  input: z.object({ ...Object.fromEntries(FILTERS.map((f) => [f, z.string().optional()])), cursor: z.string().optional(), limit: z.string().optional() }),
  output: z.object({ rows: z.array(AuditRowSchema), nextCursor: z.string().nullable() }),
  status: 200,
  access: 'tenant',
  roles: ['admin', 'reviewer'],
} as const satisfies RouteDef;

const queryAudit: RouteDef = (routes as unknown as Record<string, RouteDef | undefined>).queryAudit ?? QUERY_AUDIT_FALLBACK;

export function AuditPage() {
  const who = useWhoAmI();
  const [draft, setDraft] = useState<Filters>({});
  const [filters, setFilters] = useState<Filters>({});
  const clean = Object.fromEntries(Object.entries(filters).filter(([, v]) => v && v.trim())) as Filters;
  const rows = useInfiniteQuery({
    queryKey: ['audit', clean],
    queryFn: async ({ pageParam }) => (await call(queryAudit, { ...clean, cursor: pageParam, limit: '100' })) as { rows: AuditRow[]; nextCursor: string | null },
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

/** The export route's body as a file: the typed client's method when the route table has one, else the same GET with the key. */
async function download(filters: Filters, format: 'csv' | 'jsonl'): Promise<void> {
  const method = (client() as unknown as Record<string, unknown>).exportAudit;
  let text: string;
  if (typeof method === 'function') {
    const out: unknown = await (method as (q: object) => Promise<unknown>).call(client(), { ...filters, format });
    text = typeof out === 'string' ? out : await new Response(out as BodyInit).text();
  } else {
    const res = await fetch(`/v1/audit/export?${new URLSearchParams({ ...filters, format }).toString()}`, { headers: { authorization: `Bearer ${storedKey() ?? ''}` } });
    if (!res.ok) throw new Error(`export failed: ${res.status} ${await res.text()}`);
    text = await res.text();
  }
  const url = URL.createObjectURL(new Blob([text], { type: format === 'csv' ? 'text/csv' : 'application/x-ndjson' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `mnemograph-audit.${format}`;
  a.click();
  URL.revokeObjectURL(url);
}
