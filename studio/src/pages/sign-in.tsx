import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { signIn, signOut } from '../api';

/** Sign-in with an API key: kept in sessionStorage for this tab only; the key's role decides what the studio shows. */
export function SignInPage({ error }: { error?: string }) {
  const [key, setKey] = useState('');
  const queries = useQueryClient();
  return (
    <form
      className="signin"
      onSubmit={(e) => {
        e.preventDefault();
        signIn(key);
        void queries.invalidateQueries();
        setKey('');
      }}
    >
      <h1>Mnemograph Studio</h1>
      <p className="muted">Sign in with an API key (`mnemograph keys create --tenant T`). It is kept for this tab only.</p>
      <input type="password" name="apiKey" autoComplete="off" placeholder="mg_…" value={key} onChange={(e) => setKey(e.target.value)} aria-label="API key" />
      <button type="submit" disabled={key.trim().length === 0}>
        Sign in
      </button>
      {error && (
        <p className="error" role="alert" data-testid="signin-error">
          {error}
          <button type="button" className="link" onClick={() => signOut()}>
            clear
          </button>
        </p>
      )}
    </form>
  );
}
