import { useInfiniteQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { call, errorText, routes, seesMemory, useWhoAmI } from '../api';

/** The labels a user's row counts, in the order shown. */
const COLUMNS = ['Conversation', 'Turn', 'Entity', 'Fact', 'Goal', 'Strategy', 'ToolInvocation'] as const;

/** The tenant's users with their counts; a memory key opens a user's memory, a reviewer key sees the counts only. */
export function UsersPage() {
  const who = useWhoAmI();
  const users = useInfiniteQuery({
    queryKey: ['users'],
    queryFn: ({ pageParam }) => call(routes.listUsers, { cursor: pageParam, limit: 50 }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  if (users.isError) return <p className="error">{errorText(users.error)}</p>;
  const rows = users.data?.pages.flatMap((p) => p.users) ?? [];
  const linked = seesMemory(who.data?.role);
  return (
    <section>
      <h2>Users</h2>
      {users.isPending ? (
        <p className="muted">Loading…</p>
      ) : rows.length === 0 ? (
        <p className="muted">This tenant has no users yet.</p>
      ) : (
        <table className="grid" data-testid="users">
          <thead>
            <tr>
              <th>user</th>
              {COLUMNS.map((c) => (
                <th key={c} className="num">
                  {c === 'ToolInvocation' ? 'tool calls' : `${c.toLowerCase()}s`}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((u) => (
              <tr key={u.userId}>
                <td>
                  {linked ? (
                    <Link to="/users/$userId" params={{ userId: u.userId }}>
                      {u.userId}
                    </Link>
                  ) : (
                    u.userId
                  )}
                </td>
                {COLUMNS.map((c) => (
                  <td key={c} className="num">
                    {(u.counts[c] ?? 0).toLocaleString()}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {users.hasNextPage && (
        <button onClick={() => void users.fetchNextPage()} disabled={users.isFetchingNextPage}>
          More users
        </button>
      )}
    </section>
  );
}
