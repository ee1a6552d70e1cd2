import { useMutation } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useState } from 'react';
import { call, errorText, routes } from '../api';
import type { RouteInput, RouteOutput } from '../../../src/client';

const route = getRouteApi('/users/$userId/search');

type Query = RouteInput<typeof routes.remember>;
type Techniques = NonNullable<Query['techniques']>;
type Bundle = RouteOutput<typeof routes.remember>;

/** The switches a person can flip per query; unset ones follow the server's configuration. */
const FLAGS = ['fulltext', 'vector', 'neighbours', 'speakerBoost', 'timeAnswerBoost', 'recency', 'rerank', 'hyde', 'statementQuery'] as const;
type Flag = (typeof FLAGS)[number];
type FlagState = Record<Flag, 'default' | 'on' | 'off'>;

/**
 * Search and explain: the query runs `remember` (the same pipeline agents use) and shows each
 * item with why it was recalled — its signals (each with rank and score), the stage timings,
 * degraded signals — and the prompt block `recall/context` gives for the same query.
 */
export function SearchPage() {
  const { userId } = route.useParams();
  const [text, setText] = useState('');
  const [topK, setTopK] = useState(10);
  const [channels, setChannels] = useState('');
  const [flags, setFlags] = useState<FlagState>(() => Object.fromEntries(FLAGS.map((f) => [f, 'default'])) as FlagState);
  const [selfQuery, setSelfQuery] = useState<'' | 'off' | 'boost' | 'filter'>('');
  const [expansion, setExpansion] = useState<'' | 'off' | 'feedback' | 'llm'>('');

  const run = useMutation({
    mutationFn: async () => {
      const techniques: Techniques = {};
      for (const f of FLAGS) if (flags[f] !== 'default') techniques[f] = flags[f] === 'on';
      if (selfQuery) techniques.selfQuery = selfQuery;
      if (expansion) techniques.queryExpansion = expansion;
      const list = channels
        .split(',')
        .map((c) => c.trim())
        .filter(Boolean);
      const query: Query = { userId, query: text, topK, techniques, ...(list.length > 0 ? { channels: list } : {}) };
      const [bundle, context] = await Promise.all([call(routes.remember, query), call(routes.recallContext, query)]);
      return { bundle, context: context.context };
    },
  });

  return (
    <section>
      <div className="crumbs">
        <Link to="/users">Users</Link> /{' '}
        <Link to="/users/$userId" params={{ userId }}>
          {userId}
        </Link>{' '}
        / <strong>Search and explain</strong>
      </div>
      <form
        className="search"
        onSubmit={(e) => {
          e.preventDefault();
          run.mutate();
        }}
      >
        <input className="q" value={text} onChange={(e) => setText(e.target.value)} placeholder="What does the agent remember about…" aria-label="query" />
        <label>
          top K <input type="number" min={1} max={200} value={topK} onChange={(e) => setTopK(Number(e.target.value))} />
        </label>
        <label>
          channels <input value={channels} onChange={(e) => setChannels(e.target.value)} placeholder="_global" />
        </label>
        <button type="submit" disabled={text.trim().length === 0 || run.isPending}>
          Recall
        </button>
        <fieldset className="techniques">
          <legend>Techniques for this query</legend>
          {FLAGS.map((f) => (
            <label key={f}>
              {f}{' '}
              <select value={flags[f]} onChange={(e) => setFlags({ ...flags, [f]: e.target.value as FlagState[Flag] })} aria-label={`technique ${f}`}>
                <option value="default">default</option>
                <option value="on">on</option>
                <option value="off">off</option>
              </select>
            </label>
          ))}
          <label>
            selfQuery{' '}
            <select value={selfQuery} onChange={(e) => setSelfQuery(e.target.value as typeof selfQuery)}>
              <option value="">default</option>
              <option value="off">off</option>
              <option value="boost">boost</option>
              <option value="filter">filter</option>
            </select>
          </label>
          <label>
            queryExpansion{' '}
            <select value={expansion} onChange={(e) => setExpansion(e.target.value as typeof expansion)}>
              <option value="">default</option>
              <option value="off">off</option>
              <option value="feedback">feedback</option>
              <option value="llm">llm</option>
            </select>
          </label>
        </fieldset>
      </form>
      {run.isError && <p className="error">{errorText(run.error)}</p>}
      {run.data && <Explanation bundle={run.data.bundle} context={run.data.context} />}
    </section>
  );
}

function Explanation({ bundle, context }: { bundle: Bundle; context: string }) {
  return (
    <div className="explain" data-testid="explain">
      <div className="timings">
        <b>stage timings</b>{' '}
        {Object.entries(bundle.timings).map(([k, v]) => (
          <span key={k} className="tag">
            {k} {v.toFixed(1)} ms
          </span>
        ))}
        {bundle.degraded.length > 0 && (
          <span data-testid="degraded">
            {' '}
            <b>degraded</b>{' '}
            {bundle.degraded.map((d) => (
              <span key={d} className="tag warn">
                {d}
              </span>
            ))}
          </span>
        )}
      </div>
      <h3>Turns ({bundle.turns.length})</h3>
      <table className="grid">
        <thead>
          <tr>
            <th>#</th>
            <th className="num">score</th>
            <th>turn</th>
            <th>why: signals (rank · score)</th>
          </tr>
        </thead>
        <tbody>
          {bundle.turns.map((t, i) => (
            <tr key={t.turn.id} data-testid="recalled-turn">
              <td>{i + 1}</td>
              <td className="num">{t.score.toFixed(3)}</td>
              <td>
                <span className="muted">
                  {t.turn.conversationId}:{t.turn.index} {t.turn.role}
                </span>
                <br />
                {t.turn.content}
              </td>
              <td>
                <Signals signals={t.signals} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {(['facts', 'entities', 'strategies', 'goals'] as const).map((kind) =>
        bundle[kind].length === 0 ? null : (
          <div key={kind}>
            <h3>
              {kind} ({bundle[kind].length})
            </h3>
            <table className="grid">
              <tbody>
                {bundle[kind].map((item) => (
                  <tr key={item.id} data-testid={`recalled-${kind}`}>
                    <td className="num">{item.relevance.toFixed(3)}</td>
                    <td>{item.text}</td>
                    <td>
                      <Signals signals={item.signals} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ),
      )}
      <h3>Prompt block (recall/context)</h3>
      <pre className="context" data-testid="context">
        {context || '(empty: nothing relevant)'}
      </pre>
    </div>
  );
}

/** A signal is a rank and score (or another value); each shows as one chip. */
function Signals({ signals }: { signals: Record<string, unknown> }) {
  return (
    <span className="signals">
      {Object.entries(signals).map(([name, v]) => (
        <span key={name} className="tag signal" data-testid="signal">
          {name} {describe(v)}
        </span>
      ))}
    </span>
  );
}

function describe(v: unknown): string {
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const parts = [];
    if (typeof o.rank === 'number') parts.push(`#${o.rank}`);
    if (typeof o.score === 'number') parts.push(o.score.toFixed(3));
    const rest = Object.entries(o).filter(([k]) => k !== 'rank' && k !== 'score');
    for (const [k, x] of rest) parts.push(`${k}=${typeof x === 'number' ? Number(x.toFixed(3)) : JSON.stringify(x)}`);
    return parts.join(' · ');
  }
  return typeof v === 'number' ? v.toFixed(3) : JSON.stringify(v);
}
