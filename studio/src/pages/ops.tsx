import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { call, errorText, routes, useWhoAmI } from '../api';

/*
 * Operations (admin keys): GET /v1/ops — the worker's recent job runs (status, duration,
 * failures), the tenant's embedding backlog and consolidation lag, LLM calls and cost over the
 * window, and each store's health. Refreshed every 30 s.
 */
export function OpsPage() {
  const who = useWhoAmI();
  const [hours, setHours] = useState(24);
  const admin = who.data?.role === 'admin';
  const ops = useQuery({ queryKey: ['ops', hours], queryFn: () => call(routes.getOperations, { hours }), enabled: admin, refetchInterval: 30_000 });
  if (!admin) return <p className="notice">The Operations page is for admin keys; this is a {who.data?.role} key.</p>;
  if (ops.isError) return <p className="error">{errorText(ops.error)}</p>;
  if (!ops.data) return <p className="muted">Loading…</p>;
  const r = ops.data;
  return (
    <section data-testid="ops">
      <h2>Operations</h2>
      <label>
        window{' '}
        <select aria-label="window" value={hours} onChange={(e) => setHours(Number(e.target.value))}>
          {[1, 24, 168, 720].map((h) => (
            <option key={h} value={h}>
              {h < 48 ? `${h} h` : `${h / 24} days`}
            </option>
          ))}
        </select>
      </label>{' '}
      <span className="muted">as of {new Date(r.generatedAt).toLocaleString()}</span>
      <h3>Stores</h3>
      <ul data-testid="ops-stores">
        {(['neo4j', 'postgres', 'redis'] as const).map((s) => (
          <li key={s}>
            {s}: <b className={r.stores[s].up ? '' : 'error'}>{r.stores[s].up ? 'up' : r.stores[s].degraded ? 'down (degraded: in-process fallback)' : 'down'}</b>{' '}
            <span className="muted">{r.stores[s].latencyMs.toFixed(1)} ms</span>
            {r.stores[s].error && <span className="error"> {r.stores[s].error}</span>}
          </li>
        ))}
      </ul>
      <h3>Backlogs</h3>
      <ul data-testid="ops-backlogs">
        <li>embedding backlog: {r.embeddingBacklog.turns.toLocaleString()} turns</li>
        <li>
          consolidation: {r.consolidation.conversations.toLocaleString()} conversations waiting, lag {formatSeconds(r.consolidation.lagSeconds)}
        </li>
      </ul>
      <h3>LLM calls</h3>
      <p data-testid="ops-llm">
        {r.llm.calls.toLocaleString()} calls ({r.llm.failed} failed) · {r.llm.inputTokens.toLocaleString()} in / {r.llm.outputTokens.toLocaleString()} out tokens · ${r.llm.costUsd.toFixed(4)}
      </p>
      <table>
        <thead>
          <tr>
            <th>purpose</th>
            <th>model</th>
            <th>calls</th>
            <th>failed</th>
            <th>cost</th>
          </tr>
        </thead>
        <tbody>
          {r.llm.byPurpose.map((p) => (
            <tr key={`${p.purpose}/${p.model}`}>
              <td>{p.purpose}</td>
              <td>{p.model}</td>
              <td>{p.calls}</td>
              <td>{p.failed}</td>
              <td>${p.costUsd.toFixed(4)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Worker jobs</h3>
      <table data-testid="ops-jobs">
        <thead>
          <tr>
            <th>job</th>
            <th>last run</th>
            <th>status</th>
            <th>duration</th>
            <th>runs</th>
            <th>failures</th>
            <th>last success</th>
          </tr>
        </thead>
        <tbody>
          {r.jobs.map((j) => (
            <tr key={j.job} className={j.lastStatus === 'failed' ? 'failed' : ''}>
              <td>{j.job}</td>
              <td>{new Date(j.lastStartedAt).toLocaleString()}</td>
              <td>{j.lastStatus}</td>
              <td>{j.lastDurationMs === null ? '—' : `${(j.lastDurationMs / 1000).toFixed(1)} s`}</td>
              <td>{j.runs}</td>
              <td>{j.failures}</td>
              <td>{j.lastSuccessAt ? new Date(j.lastSuccessAt).toLocaleString() : 'never'}</td>
            </tr>
          ))}
          {r.jobs.length === 0 && (
            <tr>
              <td colSpan={7} className="muted">
                no job ran in the window
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </section>
  );
}

function formatSeconds(s: number): string {
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
