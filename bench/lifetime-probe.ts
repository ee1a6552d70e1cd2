import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/**
 * The deletion pass's view of the service: every surface through which a person or an agent
 * can get memory back, called over HTTP with the tenant's key, each answer reduced to the
 * external ids it returned (turn ids `<conversation>:<index>`, fact and entity ids,
 * conversation ids), plus the raw text where a surface returns prose (recall/context).
 */

export const SURFACES = [
  'recall',
  'recall_context',
  'search_vector',
  'search_facts_text',
  'search_facts_vector',
  'mcp',
  'export',
  'browse_conversations',
  'browse_turns',
  'browse_facts',
  'browse_entities',
] as const;
export type Surface = (typeof SURFACES)[number];

/** What one surface returned: ids, and text for the prose surfaces. */
export interface Seen {
  ids: Set<string>;
  text: string;
}

export class ApiClient {
  constructor(
    readonly url: string,
    private readonly key: string,
    /** The tenant's namespace prefix (`<tenant>.`): stripped from ids a surface returns internal (export rows). */
    readonly prefix: string,
  ) {}

  /** An id in the tenant's terms. */
  external(id: string): string {
    return id.startsWith(this.prefix) ? id.slice(this.prefix.length) : id;
  }

  async call(method: string, path: string, body?: unknown): Promise<{ status: number; text: string; ms: number }> {
    const t0 = performance.now();
    const res = await fetch(this.url + path, {
      method,
      headers: { authorization: `Bearer ${this.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, ms: performance.now() - t0 };
  }

  /** A call that must succeed (2xx); its JSON body. */
  async json(method: string, path: string, body?: unknown): Promise<unknown> {
    const r = await this.call(method, path, body);
    if (r.status < 200 || r.status > 299) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 300)}`);
    return JSON.parse(r.text) as unknown;
  }

  /** An MCP client over the streamable HTTP transport, acting for `userId`. */
  async mcp(userId: string): Promise<Client> {
    const client = new Client({ name: 'bench-lifetime', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${this.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${this.key}`, 'x-mnemograph-user': userId } } }));
    return client;
  }
}

/** Every string under an `id` or `conversationId` key, anywhere in a JSON value. */
export function idsIn(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) idsIn(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if ((k === 'id' || k === 'conversationId') && typeof v === 'string') out.add(v);
      else idsIn(v, out);
    }
  }
  return out;
}

/** The ids named by search_memory's lines (`fact <id>: …`, `turn <id> <date> …`, …). */
export function idsInMcpText(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/^(?:fact|entity|goal|strategy|turn) (\S+?):?(?:\s|$)/gm)) out.add(m[1]!);
  return out;
}

/**
 * The query surfaces, asked one probe (a natural-language query) for one user: recall, its
 * formatted context, the turn and fact searches, and MCP's search tool. `topK` items each.
 */
export async function probeQuery(api: ApiClient, mcp: Client, userId: string, query: string, topK: number): Promise<Partial<Record<Surface, Seen>>> {
  const ids = async (path: string, body: object, text: (answer: Record<string, unknown>) => string = () => ''): Promise<Seen> => {
    const answer = (await api.json('POST', path, { userId, query, ...body })) as Record<string, unknown>;
    return { ids: idsIn(answer), text: text(answer) };
  };
  const context = (await api.json('POST', '/v1/recall/context', { userId, query, topK, tokenBudget: 2_000 })) as { context: string };
  const tool = (await mcp.callTool({ name: 'search_memory', arguments: { query: query.slice(0, 2_000), limit: topK } })) as { content: Array<{ text?: string }> };
  const mcpText = tool.content.map((c) => c.text ?? '').join('\n');
  return {
    // The profile is prose learned from what was said: read for the items' text.
    recall: await ids('/v1/recall', { topK }, (a) => JSON.stringify(a.profile ?? null)),
    recall_context: { ids: new Set(), text: context.context },
    search_vector: await ids('/v1/search/vector', { topK }),
    search_facts_text: await ids('/v1/facts/search-text', { topK }),
    search_facts_vector: await ids('/v1/facts/search', { topK }),
    mcp: { ids: idsInMcpText(mcpText), text: mcpText },
  };
}

/** Every page of a browse listing (`cursor` / `nextCursor` pagination), its ids gathered. */
async function allPages(api: ApiClient, path: string): Promise<Set<string>> {
  const out = new Set<string>();
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page = (await api.json('GET', `${path}${sep}limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)) as { nextCursor?: string | null };
    idsIn(page, out);
    cursor = page.nextCursor ?? null;
  } while (cursor);
  return out;
}

/** Every turn of a conversation as the studio pages them (404: the conversation is gone, nothing listed). */
async function allTurns(api: ApiClient, userId: string, conversationId: string): Promise<Set<string>> {
  const out = new Set<string>();
  for (let after = -1; ;) {
    const r = await api.call('GET', `/v1/users/${userId}/conversations/${conversationId}/turns?afterIndex=${after}&limit=1000`);
    if (r.status === 404) return out;
    if (r.status !== 200) throw new Error(`listing the turns of ${conversationId}: ${r.status} ${r.text.slice(0, 200)}`);
    const page = JSON.parse(r.text) as { turns: Array<{ id: string }>; nextAfterIndex: number | null };
    for (const t of page.turns) out.add(t.id);
    if (page.nextAfterIndex === null) return out;
    after = page.nextAfterIndex;
  }
}

/**
 * The whole-user surfaces of one user: the export (a Turn or Conversation node and any
 * turn-log row count by id, a Fact node only while its status is active, since the export
 * keeps retracted and superseded facts as history by design; the other tables' rows, such as
 * the profile, as text), and the studio's listings: conversations, the turns of
 * `conversations`, current facts, live entities.
 */
export async function probeUser(api: ApiClient, userId: string, conversations: string[]): Promise<Partial<Record<Surface, Seen>>> {
  const exported = new Set<string>();
  const learned: string[] = [];
  const r = await api.call('GET', `/v1/users/${userId}/export`);
  if (r.status !== 200) throw new Error(`export of ${userId}: ${r.status} ${r.text.slice(0, 200)}`);
  for (const text of r.text.split('\n').filter(Boolean)) {
    const line = JSON.parse(text) as ExportLine;
    exportedIds(line, (id) => exported.add(api.external(id)));
    // Rows learned from what was said (profile, observations...) are read for the items' text; the turn log is the turns themselves.
    if (line.kind === 'row' && line.table !== 'conversation_logs') learned.push(text);
  }
  const turns = new Set<string>();
  for (const c of conversations) for (const id of await allTurns(api, userId, c)) turns.add(id);
  return {
    export: { ids: exported, text: learned.join('\n') },
    browse_conversations: { ids: await allPages(api, `/v1/users/${userId}/conversations`), text: '' },
    browse_turns: { ids: turns, text: '' },
    browse_facts: { ids: await allPages(api, `/v1/users/${userId}/facts?status=current`), text: '' },
    browse_entities: { ids: await allPages(api, `/v1/users/${userId}/entities`), text: '' },
  };
}

interface ExportLine {
  kind: string;
  labels?: string[];
  props?: Record<string, unknown>;
  table?: string;
  row?: Record<string, unknown>;
}

function exportedIds(line: ExportLine, add: (id: string) => void): void {
  if (line.kind === 'node' && line.props && typeof line.props.id === 'string') {
    if (!line.labels?.includes('Fact') || line.props.status === 'active') add(line.props.id);
  }
  if (line.kind === 'row' && typeof line.row?.turn_id === 'string') add(line.row.turn_id);
}
