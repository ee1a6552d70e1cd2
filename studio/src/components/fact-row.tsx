import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { call, errorText, routes } from '../api';
import type { RouteOutput } from '../../../src/client';

export type Fact = RouteOutput<typeof routes.getFact>;

/** One fact with its state and the edits a person can make: correct, retract, confirm, restore. Each is audited by the API. */
export function FactRow({ userId, fact: f }: { userId: string; fact: Fact }) {
  const queries = useQueryClient();
  const [mode, setMode] = useState<'view' | 'correct' | 'retract'>('view');
  const [text, setText] = useState('');
  const done = () => {
    setMode('view');
    setText('');
    void queries.invalidateQueries({ queryKey: ['facts'] });
    void queries.invalidateQueries({ queryKey: ['timeline'] });
    void queries.invalidateQueries({ queryKey: ['graph'] });
  };
  const act = useMutation({
    mutationFn: async (what: 'correct' | 'retract' | 'confirm' | 'restore') => {
      if (what === 'correct') return call(routes.correctFact, { userId, factId: f.id, claim: text, reason: 'corrected in the studio' });
      if (what === 'retract') return call(routes.retractFact, { userId, factId: f.id, reason: text || undefined });
      if (what === 'confirm') return call(routes.confirmFact, { userId, factId: f.id });
      return call(routes.restoreFact, { userId, factId: f.id, reason: 'restored in the studio' });
    },
    onSuccess: done,
  });
  const active = f.status === 'active';
  return (
    <li className={`fact ${f.status}`} data-testid="fact" data-status={f.status}>
      <span className="claim">{f.claim}</span> <span className="tag">{f.status}</span>
      {f.protected && <span className="tag ok">confirmed</span>}
      <span className="muted">
        {' '}
        conf {f.confidence.toFixed(2)} · #{f.channel}
      </span>
      <span className="row-actions">
        {active && (
          <>
            <button className="link" onClick={() => (setMode('correct'), setText(f.claim))}>
              correct
            </button>
            <button className="link" onClick={() => setMode('retract')}>
              retract
            </button>
            {!f.protected && (
              <button className="link" onClick={() => act.mutate('confirm')}>
                confirm
              </button>
            )}
          </>
        )}
        {f.status === 'retracted' && (
          <button className="link" onClick={() => act.mutate('restore')}>
            restore
          </button>
        )}
      </span>
      {mode !== 'view' && (
        <form
          className="inline"
          onSubmit={(e) => {
            e.preventDefault();
            act.mutate(mode);
          }}
        >
          <input
            autoFocus
            value={text}
            onChange={(e) => setText(e.target.value)}
            placeholder={mode === 'correct' ? 'the corrected claim' : 'why (optional)'}
            aria-label={mode === 'correct' ? 'corrected claim' : 'reason'}
          />
          <button type="submit" disabled={act.isPending || (mode === 'correct' && text.trim().length === 0)}>
            {mode === 'correct' ? 'Save correction' : 'Retract'}
          </button>
          <button type="button" onClick={() => setMode('view')}>
            Cancel
          </button>
        </form>
      )}
      {act.isError && <span className="error"> {errorText(act.error)}</span>}
    </li>
  );
}
