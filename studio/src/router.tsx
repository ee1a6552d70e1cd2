import { createRootRoute, createRoute, createRouter, Link, Outlet, redirect, useNavigate } from '@tanstack/react-router';
import { useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, type ReactNode } from 'react';
import { errorText, seesAudit, seesMemory, signOut, useSignedInKey, useWhoAmI } from './api';
import { AuditPage } from './pages/audit';
import { ConversationPage } from './pages/conversation';
import { OpsPage } from './pages/ops';
import { PoolPage, PoolsPage } from './pages/pools';
import { SearchPage } from './pages/search';
import { SignInPage } from './pages/sign-in';
import { UserPage } from './pages/user';
import { UsersPage } from './pages/users';

/*
 * The studio's pages (TanStack Router, code-based, under /studio). The key's role decides
 * what is shown: admin and agent keys browse memory; reviewer keys see the users' counts and
 * the audit log, and no page that shows memory content.
 */

// The entity view loads Cytoscape: its own chunk, fetched when the page opens.
const EntityPage = lazy(() => import('./pages/entity').then((m) => ({ default: m.EntityPage })));

function Layout() {
  const who = useWhoAmI();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const key = useSignedInKey();
  if (!key) return <SignInPage />;
  if (who.isPending) return <p className="muted pad">Checking the key…</p>;
  if (who.isError) return <SignInPage error={errorText(who.error)} />;
  const me = who.data;
  return (
    <div className="app">
      <header className="top">
        <strong className="brand">Mnemograph Studio</strong>
        <nav>
          <Link to="/users" activeProps={{ className: 'active' }}>
            Users
          </Link>
          {seesMemory(me.role) && (
            <Link to="/pools" activeProps={{ className: 'active' }}>
              Pools
            </Link>
          )}
          {me.role === 'admin' && (
            <Link to="/ops" activeProps={{ className: 'active' }}>
              Operations
            </Link>
          )}
          {seesAudit(me.role) && (
            <Link to="/audit" activeProps={{ className: 'active' }}>
              Audit
            </Link>
          )}
        </nav>
        <span className="who" data-testid="whoami">
          {me.tenantId} · {me.role}
          {me.agentId ? ` · agent ${me.agentId}` : ''} · key {me.keyId}
        </span>
        <button
          onClick={() => {
            signOut();
            queries.clear();
            void navigate({ to: '/' });
          }}
        >
          Sign out
        </button>
      </header>
      <main>
        <Outlet />
      </main>
    </div>
  );
}

/** Shows its children only to keys that may see memory content. */
export function MemoryOnly({ children }: { children: ReactNode }) {
  const who = useWhoAmI();
  if (!who.data) return null;
  if (!seesMemory(who.data.role)) {
    return (
      <p className="notice" data-testid="no-memory">
        A {who.data.role} key does not show memory content. Use the Users page for counts and the Audit page for who did what.
      </p>
    );
  }
  return <>{children}</>;
}

const rootRoute = createRootRoute({ component: Layout });
const indexRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/',
  beforeLoad: () => {
    // TanStack Router's redirect is thrown (its documented way), not an Error.
    // eslint-disable-next-line @typescript-eslint/only-throw-error
    throw redirect({ to: '/users' });
  },
});
const usersRoute = createRoute({ getParentRoute: () => rootRoute, path: '/users', component: UsersPage });
const userRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/users/$userId',
  component: () => (
    <MemoryOnly>
      <UserPage />
    </MemoryOnly>
  ),
});
const conversationRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/users/$userId/conversations/$conversationId',
  component: () => (
    <MemoryOnly>
      <ConversationPage />
    </MemoryOnly>
  ),
});
const searchRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/users/$userId/search',
  component: () => (
    <MemoryOnly>
      <SearchPage />
    </MemoryOnly>
  ),
});
const entityRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/users/$userId/entities/$entityId',
  component: () => (
    <MemoryOnly>
      <Suspense fallback={<p className="muted">Loading the entity view…</p>}>
        <EntityPage />
      </Suspense>
    </MemoryOnly>
  ),
});
const poolsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/pools',
  component: () => (
    <MemoryOnly>
      <PoolsPage />
    </MemoryOnly>
  ),
});
const poolRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/pools/$poolId',
  component: () => (
    <MemoryOnly>
      <PoolPage />
    </MemoryOnly>
  ),
});
const opsRoute = createRoute({ getParentRoute: () => rootRoute, path: '/ops', component: OpsPage });
const auditRoute = createRoute({ getParentRoute: () => rootRoute, path: '/audit', component: AuditPage });

export const router = createRouter({
  routeTree: rootRoute.addChildren([indexRoute, usersRoute, userRoute, conversationRoute, searchRoute, entityRoute, poolsRoute, poolRoute, opsRoute, auditRoute]),
  basepath: '/studio',
  defaultPreload: false,
});

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
