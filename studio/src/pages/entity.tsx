import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useMemo, useState } from 'react';
import { call, errorText, routes } from '../api';
import { Confirm } from '../components/confirm';
import { FactRow, type Fact } from '../components/fact-row';
import { Graph } from '../components/graph';

const route = getRouteApi('/users/$userId/entities/$entityId');

/**
 * One entity: aliases, description, its facts (with the edits), an interactive graph of its
 * neighbourhood (depth 1–3), and a timeline of its facts and relationships with validity
 * windows and SUPERSEDES chains. Merge another entity into it, or delete it.
 */
export function EntityPage() {
  const { userId, entityId } = route.useParams();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const [depth, setDepth] = useState(1);
  const entity = useQuery({ queryKey: ['entity', userId, entityId], queryFn: () => call(routes.getEntity, { userId, entityId }) });
  const graph = useQuery({ queryKey: ['graph', userId, entityId, depth], queryFn: () => call(routes.getEntityGraph, { userId, entityIds: [entityId], depth, limit: 200 }) });
  const facts = useQuery({ queryKey: ['facts', userId, 'entity', entityId], queryFn: () => call(routes.listFacts, { userId, entityId, status: 'all', limit: 500 }) });
  const timeline = useQuery({ queryKey: ['timeline', userId, entityId], queryFn: () => call(routes.getEntityTimeline, { userId, entityId, limit: 500 }) });
  const graphData = useMemo(() => graph.data && { rootId: entityId, entities: graph.data.entities, relationships: graph.data.relationships }, [graph.data, entityId]);

  const [confirmDelete, setConfirmDelete] = useState(false);
  const remove = useMutation({
    mutationFn: () => call(routes.deleteEntity, { userId, entityId }),
    onSuccess: async () => {
      void queries.invalidateQueries({ queryKey: ['entities', userId] });
      await navigate({ to: '/users/$userId', params: { userId } });
    },
  });

  if (entity.isError) return <p className="error">{errorText(entity.error)}</p>;
  const e = entity.data;
  const factRows = facts.data?.facts ?? [];
  const current = factRows.filter((f) => f.status === 'active');
  const relCount = graph.data?.relationships.filter((r) => r.sourceId === entityId || r.targetId === entityId).length ?? 0;
  return (
    <section className="entity">
      <div className="crumbs">
        <Link to="/users">Users</Link> /{' '}
        <Link to="/users/$userId" params={{ userId }}>
          {userId}
        </Link>{' '}
        / <strong>{e?.name ?? entityId}</strong>
      </div>
      {e && (
        <div className="card">
          <h2>
            {e.name} <span className="tag">{e.type}</span> <span className="muted">#{e.channel}</span>
          </h2>
          <p>
            <b>aliases:</b> {e.aliases.length > 0 ? e.aliases.join(', ') : <span className="muted">none</span>}
          </p>
          <p>
            <b>description:</b> {description(e) ?? <span className="muted">none</span>}
          </p>
          <div className="actions">
            <MergeControl userId={userId} keepId={entityId} />
            <button className="danger" onClick={() => setConfirmDelete(true)}>
              Delete entity…
            </button>
          </div>
        </div>
      )}
      <div className="columns">
        <div>
          <h3>
            Neighbourhood{' '}
            <select value={depth} onChange={(ev) => setDepth(Number(ev.target.value))} aria-label="depth" data-testid="depth">
              {[1, 2, 3].map((d) => (
                <option key={d} value={d}>
                  depth {d}
                </option>
              ))}
            </select>
          </h3>
          {graph.isError && <p className="error">{errorText(graph.error)}</p>}
          {graphData && <Graph data={graphData} onOpen={(id) => void navigate({ to: '/users/$userId/entities/$entityId', params: { userId, entityId: id } })} />}
          <p className="muted">
            {graph.data?.entities.length ?? 0} entities · {graph.data?.relationships.length ?? 0} relationships
          </p>
          <h3>Facts</h3>
          <ul data-testid="entity-facts">
            {factRows.map((f) => (
              <FactRow key={f.id} userId={userId} fact={f} />
            ))}
            {factRows.length === 0 && <li className="muted">none</li>}
          </ul>
        </div>
        <div>
          <h3>Timeline</h3>
          {timeline.isError && <p className="error">{errorText(timeline.error)}</p>}
          <Timeline entries={timeline.data?.entries ?? []} facts={factRows} />
        </div>
      </div>
      {confirmDelete && (
        <Confirm title={`Delete ${e?.name ?? 'this entity'}?`} confirmLabel="Delete entity" busy={remove.isPending} onCancel={() => setConfirmDelete(false)} onConfirm={() => remove.mutate()}>
          <p data-testid="deletion-summary">
            The entity is closed (valid until now) and leaves search, recall and the graph; it is kept as history. {current.length} current fact(s) about it and {relCount} relationship(s) stay,
            pointing at the closed entity.
          </p>
          {remove.isError && <p className="error">{errorText(remove.error)}</p>}
        </Confirm>
      )}
    </section>
  );
}

type Entry = Awaited<ReturnType<typeof call<typeof routes.getEntityTimeline>>>['entries'][number] & { fact?: unknown; relationship?: unknown };

/** Facts and relationships in time order with their validity windows; a superseded fact names the one that replaced it. */
function Timeline({ entries, facts }: { entries: Entry[]; facts: Fact[] }) {
  const claims = new Map(facts.map((f) => [f.id, f.claim]));
  const sorted = [...entries].sort((a, b) => a.validFrom.localeCompare(b.validFrom));
  return (
    <ol className="timeline" data-testid="timeline">
      {sorted.map((t, i) => {
        const fact = t.fact as (Fact & { supersededBy?: string | null }) | undefined;
        const rel = t.relationship as { type: string; sourceId: string; targetId: string } | undefined;
        return (
          <li key={i} className={t.validTo ? 'closed' : 'open'} data-testid="timeline-entry">
            <span className="when">
              {fmt(t.validFrom)} → {t.validTo ? fmt(t.validTo) : 'now'}
            </span>{' '}
            <span className="tag">{t.kind}</span>{' '}
            {fact ? (
              <>
                {fact.claim} <span className="tag">{fact.status}</span>
                {fact.supersededBy && (
                  <span className="muted" data-testid="supersedes">
                    {' '}
                    ⟶ superseded by “{claims.get(fact.supersededBy) ?? fact.supersededBy}”
                  </span>
                )}
              </>
            ) : rel ? (
              <>
                {rel.type}{' '}
                <span className="muted">
                  {rel.sourceId.slice(0, 8)} → {rel.targetId.slice(0, 8)}
                </span>
              </>
            ) : null}
          </li>
        );
      })}
      {sorted.length === 0 && <li className="muted">nothing yet</li>}
    </ol>
  );
}

/** The entity's description (the wire schema passes it through untyped). */
function description(e: object): string | null {
  const d = (e as { description?: unknown }).description;
  return typeof d === 'string' && d.length > 0 ? d : null;
}

function fmt(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** Pick another entity by name and fold it into this one, after a confirmation that says what moves. */
function MergeControl({ userId, keepId }: { userId: string; keepId: string }) {
  const queries = useQueryClient();
  const [q, setQ] = useState('');
  const [pick, setPick] = useState<{ id: string; name: string } | null>(null);
  const found = useQuery({ queryKey: ['entities', userId, 'merge', q], queryFn: () => call(routes.listEntities, { userId, q, limit: 10 }), enabled: q.trim().length > 1 });
  const merge = useMutation({
    mutationFn: (mergeId: string) => call(routes.mergeEntities, { userId, keepId, mergeId }),
    onSuccess: () => {
      setPick(null);
      setQ('');
      void queries.invalidateQueries();
    },
  });
  return (
    <span className="merge">
      <input placeholder="merge another entity into this one…" value={q} onChange={(e) => setQ(e.target.value)} aria-label="merge search" />
      {found.data && q.trim().length > 1 && (
        <span className="choices">
          {found.data.entities
            .filter((x) => x.id !== keepId)
            .map((x) => (
              <button key={x.id} className="link" onClick={() => setPick({ id: x.id, name: x.name })}>
                {x.name}
              </button>
            ))}
        </span>
      )}
      {merge.data && (
        <span className="ok">
          {' '}
          merged: {merge.data.moved.facts} facts, {merge.data.moved.relationships} relationships, {merge.data.moved.mentions} mentions moved
        </span>
      )}
      {pick && (
        <Confirm title={`Merge ${pick.name} into this entity?`} confirmLabel="Merge" busy={merge.isPending} onCancel={() => setPick(null)} onConfirm={() => merge.mutate(pick.id)}>
          <p>{pick.name}&apos;s name and aliases become aliases here; the facts about it, its relationships and the conversations that mention it move over; then it is closed (kept as history).</p>
          {merge.isError && <p className="error">{errorText(merge.error)}</p>}
        </Confirm>
      )}
    </span>
  );
}
