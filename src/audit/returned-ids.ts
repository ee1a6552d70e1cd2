/** Where an id sits in the items reads return: on the item, or on the node it wraps (`{turn}`, `{fact}`, ...). */
const WRAPPERS = ['turn', 'fact', 'entity', 'strategy', 'goal', 'node', 'item'] as const;

/**
 * The ids of the items a read returned, in order and without repeats, for the `affected_ids`
 * of its audit row (seed 000's context log: which memories reached which agent). An item
 * with no id of its own or of the node it wraps is skipped.
 */
export function returnedIds(items: readonly unknown[]): string[] {
  const ids = new Set<string>();
  for (const item of items) {
    const id = idOf(item);
    if (id !== null) ids.add(id);
  }
  return [...ids];
}

function idOf(item: unknown): string | null {
  if (item === null || typeof item !== 'object') return null;
  const o = item as Record<string, unknown>;
  if (typeof o.id === 'string') return o.id;
  for (const w of WRAPPERS) {
    const inner = o[w];
    const id = inner !== null && typeof inner === 'object' ? (inner as Record<string, unknown>).id : undefined;
    if (typeof id === 'string') return id;
  }
  return null;
}
