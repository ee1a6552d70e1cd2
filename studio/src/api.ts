import { useQuery } from '@tanstack/react-query';
import { useSyncExternalStore } from 'react';
import { MnemographApiError, MnemographClient, routes, type RouteInput, type RouteOutput } from '../../src/client';
import type { RouteDef } from '../../src/api/contract';

/*
 * The studio's only door to Mnemograph: the typed client of the public HTTP API, on the same
 * origin, with the API key the person signed in with. The key lives in sessionStorage: it is
 * gone when the tab closes and never reaches another tab or disk.
 */

const KEY = 'mnemograph.studio.key';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY);
}

const listeners = new Set<() => void>();
const changed = () => {
  cached = null;
  for (const l of listeners) l();
};

export function signIn(key: string): void {
  sessionStorage.setItem(KEY, key.trim());
  changed();
}

export function signOut(): void {
  sessionStorage.removeItem(KEY);
  changed();
}

/** The signed-in key (null: signed out); re-renders on sign-in and sign-out. */
export function useSignedInKey(): string | null {
  return useSyncExternalStore((l) => {
    listeners.add(l);
    return () => listeners.delete(l);
  }, storedKey);
}

let cached: { key: string; client: MnemographClient } | null = null;

/** The client for the signed-in key (no retries on refusal: a person is waiting). */
export function client(): MnemographClient {
  const key = storedKey();
  if (!key) throw new MnemographApiError(401, 'UNAUTHENTICATED', 'sign in with an API key', {});
  if (cached?.key !== key) cached = { key, client: new MnemographClient({ baseUrl: window.location.origin, apiKey: key, retries: 1, timeoutMs: 60_000 }) };
  return cached.client;
}

/** Calls any route of the table. */
export function call<R extends RouteDef>(route: R, input: RouteInput<R>): Promise<RouteOutput<R>> {
  return client().call(route, input);
}

export { routes };
export type WhoAmI = RouteOutput<typeof routes.whoami>;

/** Who the signed-in key is (role decides what the studio shows). */
export function useWhoAmI() {
  const key = useSignedInKey();
  return useQuery({ queryKey: ['whoami', key], queryFn: () => call(routes.whoami, {}), enabled: key !== null, staleTime: Infinity, retry: false });
}

/** What an error says to a person. */
export function errorText(err: unknown): string {
  if (err instanceof MnemographApiError) return `${err.status} ${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** Whether a role may see memory content (admin and agent keys; reviewers see counts and the audit log). */
export function seesMemory(role: WhoAmI['role'] | undefined): boolean {
  return role === 'admin' || role === 'agent';
}

/** Whether a role may read the audit log. */
export function seesAudit(role: WhoAmI['role'] | undefined): boolean {
  return role === 'admin' || role === 'reviewer';
}
