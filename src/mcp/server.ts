import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { AgentMemory } from '../memory/agent-memory';
import type { UserDataStore } from '../tenancy/user-data-store';
import { MnemographError, errorMessage } from '../errors';
import { VERSION } from '../package-info';

/** Whose memory the tools act on: one user (already namespaced when behind a tenant) and channel. */
export interface McpScope {
  userId: string;
  channel: string;
  /** Conversation `store_turn` writes to when the call names none. */
  conversationId?: string;
  /** Maps internal ids in outputs back to the caller's terms (tenant namespace). */
  present?: (id: string) => string;
  /** Maps the caller's conversation id to the internal one (tenant namespace). */
  conversation?: (id: string) => string;
  /** Maps the caller's pool id to the internal one (tenant namespace). */
  pool?: (id: string) => string;
}

export interface McpDeps {
  memory: AgentMemory;
  users?: UserDataStore;
  /** false: leave the short-term tools out (a facade without the tier). */
  shortTerm?: boolean;
}

/** Longest text a tool returns; agents complain of tools that flood the context. */
const MAX_OUTPUT_CHARS = 6_000;
const SNIPPET = 280;

type ToolResult = { content: Array<{ type: 'text'; text: string }>; isError?: boolean };

/**
 * The MCP server of seed 004's agent tools plus store_turn and record_observation. A
 * tool is registered only when the facade offers its operation, so the list never
 * advertises what cannot run. Outputs are short text with ids the other tools take.
 */
export function createMcpServer(deps: McpDeps, scope: McpScope): McpServer {
  const { memory } = deps;
  const present = scope.present ?? ((id: string) => id);
  const conv = scope.conversation ?? ((id: string) => id);
  const poolOf = scope.pool ?? ((id: string) => id);
  const server = new McpServer({ name: 'mnemograph', version: VERSION }, { capabilities: { tools: {} } });
  const has = (name: string) => typeof (memory as unknown as Record<string, unknown>)[name] === 'function';

  server.registerTool(
    'search_memory',
    {
      description:
        'Search long-term memory about the user (facts, people and things, past conversation turns, goals). Call before answering anything that may depend on what the user said before. Returns short lines with ids usable by correct_fact / confirm_fact.',
      inputSchema: { query: z.string().min(1).max(2_000).describe('what to look for, in natural language'), limit: z.number().int().min(1).max(20).default(5).describe('items per kind') },
      annotations: { readOnlyHint: true },
    },
    (args) =>
      run(async () => {
        if (has('remember')) {
          const b = await memory.remember({ userId: scope.userId, query: args.query, channels: [scope.channel], topK: args.limit });
          const lines: string[] = [];
          for (const f of b.facts) lines.push(`fact ${present(f.id)}: ${clip(f.text)}${conf(f.data)}`);
          for (const e of b.entities) lines.push(`entity ${present(e.id)}: ${clip(e.text)}`);
          for (const g of b.goals) lines.push(`goal ${present(g.id)}: ${clip(g.text)}`);
          for (const s of b.strategies) lines.push(`strategy ${present(s.id)}: ${clip(s.text)}`);
          // Entries of the memory pools this agent may read (none for a key without an agent).
          for (const p of b.pools ?? []) lines.push(`pool ${present(String(p.data?.poolId))} entry ${p.id}: ${clip(p.text)}`);
          for (const t of b.turns) lines.push(`turn ${present(t.turn.id)} ${t.turn.timestamp.slice(0, 10)} ${t.turn.role}: ${clip(t.turn.content)}`);
          return lines.length ? lines.join('\n') : 'nothing found';
        }
        const hits = await memory.vectorSearch({ userId: scope.userId, query: args.query, channels: [scope.channel], topK: args.limit });
        return hits.length ? hits.map((h) => `turn ${present(h.turn.id)} ${h.turn.timestamp.slice(0, 10)} ${h.turn.role}: ${clip(h.turn.content)}`).join('\n') : 'nothing found';
      }),
  );

  server.registerTool(
    'store_turn',
    {
      description: "Save one conversation message to memory (the user's or yours). Use when the runtime does not already store every turn.",
      inputSchema: {
        role: z.enum(['user', 'assistant', 'system', 'tool']),
        content: z.string().min(1).max(100_000),
        conversationId: z.string().min(1).max(100).optional().describe('defaults to the session conversation'),
      },
    },
    (args) =>
      run(async () => {
        const conversationId = args.conversationId ?? scope.conversationId;
        if (!conversationId) throw new MnemographError('VALIDATION_FAILED', 'user', 'conversationId is required (no session conversation is configured)');
        const r = await memory.storeTurn({ userId: scope.userId, channel: scope.channel, conversationId: conv(conversationId), role: args.role, content: args.content });
        return `${r.created ? 'stored' : 'already stored'} turn ${present(r.turn.id)}`;
      }),
  );

  if (deps.users) {
    const users = deps.users;
    server.registerTool('memory_stats', { description: 'Counts of what memory holds for the user (turns, facts, entities, goals, ...).', inputSchema: {}, annotations: { readOnlyHint: true } }, () =>
      run(async () => {
        const s = await users.stats(scope.userId);
        const parts = Object.entries({ ...s.nodes, ...s.rows }).map(([k, n]) => `${k}: ${n}`);
        return parts.length ? parts.join(', ') : 'memory is empty';
      }),
    );
  }

  if (has('learnFact')) {
    server.registerTool(
      'remember_fact',
      {
        description: 'Explicitly save an important fact about the user or their world ("Anna is my sister"). Returns the fact id.',
        inputSchema: { content: z.string().min(1).max(5_000).describe('the fact, as one short sentence'), confidence: z.number().min(0).max(1).default(1) },
      },
      (args) =>
        run(async () => {
          const r = await memory.learnFact({ userId: scope.userId, channel: scope.channel, claim: args.content, confidence: args.confidence, source: 'agent' });
          return `${r.created ? 'saved' : 'already known'} fact ${present(r.fact.id)}`;
        }),
    );
  }
  if (has('correctFact')) {
    server.registerTool(
      'correct_fact',
      {
        description: 'Replace a wrong or outdated fact (find its id with search_memory first). The old fact is kept as history, no longer current.',
        inputSchema: { factId: z.string().min(1).max(128), newContent: z.string().min(1).max(5_000) },
      },
      (args) =>
        run(async () => {
          const r = await memory.correctFact({ userId: scope.userId, factId: args.factId, claim: args.newContent });
          return `fact ${present(r.oldFact.id)} replaced by ${present(r.newFact.id)}`;
        }),
    );
  }
  if (has('confirmFact')) {
    server.registerTool('confirm_fact', { description: 'Mark a fact as confirmed by the user: it is then never forgotten by decay.', inputSchema: { factId: z.string().min(1).max(128) } }, (args) =>
      run(async () => {
        const f = await memory.confirmFact(scope.userId, args.factId);
        return `fact ${present(f.id)} confirmed`;
      }),
    );
  }
  if (has('getEntityGraph') && typeof memory.semantic?.findEntitiesByName === 'function') {
    server.registerTool(
      'get_entity_info',
      {
        description: 'Everything memory holds about one person, place, project or thing, by name or alias ("Project Alpha", "my boss").',
        inputSchema: { name: z.string().min(1).max(200) },
        annotations: { readOnlyHint: true },
      },
      (args) =>
        run(async () => {
          const found = await memory.semantic.findEntitiesByName({ userId: scope.userId, name: args.name, channels: [scope.channel] });
          if (found.length === 0) return `no entity named "${args.name}"`;
          const g = await memory.getEntityGraph({ userId: scope.userId, entityIds: found.slice(0, 3).map((e) => e.id), channels: [scope.channel], limit: 30 });
          const name = new Map(g.entities.map((e) => [e.id, e.name]));
          const lines = found
            .slice(0, 3)
            .map((e) => `entity ${present(e.id)}: ${e.name} (${e.type})${e.aliases.length ? `, also ${e.aliases.join(', ')}` : ''}${e.description ? ` - ${clip(e.description)}` : ''}`);
          for (const f of g.facts) lines.push(`fact ${present(f.id)}: ${clip(f.claim)} (${f.confidence.toFixed(2)})`);
          for (const r of g.relationships) lines.push(`${name.get(r.sourceId) ?? r.sourceId} ${r.type} ${name.get(r.targetId) ?? r.targetId}`);
          return lines.join('\n');
        }),
    );
  }
  if (has('consolidate')) {
    server.registerTool(
      'memory_consolidate',
      {
        description: 'Consolidate recent conversations and observations into facts now (normally runs in the background; use sparingly, it can take seconds).',
        inputSchema: {},
      },
      () =>
        run(async () => {
          const r = await memory.consolidate({ userIds: [scope.userId] });
          return `consolidation ${JSON.stringify(r).slice(0, 400)}`;
        }),
    );
  }
  // Memory pools: share what the agent learned with other agents (the key's agent needs a write grant).
  let pools: AgentMemory['pools'] | undefined;
  try {
    pools = memory.pools;
  } catch {
    pools = undefined;
  }
  if (pools) {
    const shared = pools;
    server.registerTool(
      'share_to_pool',
      {
        description:
          "Share something with other agents through a memory pool (its id from your operator; you need a write grant). Say what it is about the user only when it is this user's personal data. Returns the entry id.",
        inputSchema: {
          poolId: z.string().min(1).max(128),
          content: z.string().min(1).max(20_000).describe('kept verbatim'),
          kind: z.enum(['fact', 'observation', 'reflection', 'decision', 'plan', 'tool_output', 'conversation_summary']).default('fact'),
          importance: z.number().min(0).max(1).default(0.5),
          aboutUser: z.boolean().default(false).describe('true: the entry is about this user (their personal data, seen only in their recall)'),
        },
      },
      (args) =>
        run(async () => {
          const e = await shared.addEntry({
            poolId: poolOf(args.poolId),
            content: args.content,
            kind: args.kind,
            importance: args.importance,
            source: 'agent',
            userId: args.aboutUser ? scope.userId : undefined,
            provenance: scope.conversationId ? { conversationId: conv(scope.conversationId) } : {},
          });
          return `shared entry ${e.id} to pool ${present(e.poolId)} (version ${e.version})`;
        }),
    );
  }
  if (has('recordObservation')) {
    server.registerTool(
      'record_observation',
      {
        description: 'Note something learned about the user ("prefers short answers"); it is folded into facts and the profile by consolidation.',
        inputSchema: { content: z.string().min(1).max(10_000), category: z.enum(['fact', 'preference', 'project_details', 'correction']) },
      },
      (args) =>
        run(async () => {
          const r = await memory.recordObservation(scope.userId, args.content, args.category, { channel: scope.channel });
          return `observation ${r.observation.id} ${r.created ? 'queued' : 'already queued'}`;
        }),
    );
  }
  if (deps.shortTerm !== false) registerShortTermTools(server, memory, scope);
  return server;
}

/**
 * The short-term tier for the agent's own session (seed 001): note something for the next
 * hour, read it back (each read counts; read 3 times, it is promoted to long-term memory).
 * The session is the call's, else the MCP session conversation, else "mcp".
 */
function registerShortTermTools(server: McpServer, memory: AgentMemory, scope: McpScope): void {
  const session = (s?: string) => s ?? scope.conversationId ?? 'mcp';
  server.registerTool(
    'short_term_write',
    {
      description:
        'Keep a note in short-term memory for this session (task context, a tool result, a reflection) for ttlSeconds (default 1 hour). Notes read 3 times are promoted to long-term memory.',
      inputSchema: {
        key: z.string().min(1).max(200).describe('a short name to read it back by, e.g. current_task'),
        value: z.string().min(1).max(20_000).describe('the note (text or JSON)'),
        type: z.enum(['task_context', 'conversation', 'tool_result', 'reflection', 'observation']).default('task_context'),
        ttlSeconds: z.number().int().min(1).max(2_592_000).optional(),
        sessionId: z.string().min(1).max(128).optional().describe('defaults to the session conversation'),
      },
    },
    (args) =>
      run(async () => {
        const r = await memory.shortTerm.write({
          userId: scope.userId,
          channel: scope.channel,
          sessionId: session(args.sessionId),
          key: args.key,
          type: args.type,
          value: args.value,
          ttlSeconds: args.ttlSeconds,
        });
        return `${r.created ? 'noted' : 'updated'} ${args.key} until ${r.entry.expiresAt}`;
      }),
  );
  server.registerTool(
    'short_term_read',
    {
      description: 'Read short-term notes of this session: one by key, or all live ones (newest first) without a key.',
      inputSchema: { key: z.string().min(1).max(200).optional(), sessionId: z.string().min(1).max(128).optional() },
      annotations: { readOnlyHint: false },
    },
    (args) =>
      run(async () => {
        const sessionId = session(args.sessionId);
        if (args.key) {
          const e = await memory.shortTerm.get({ userId: scope.userId, sessionId, key: args.key });
          return `${e.key} (${e.type}, read ${e.accessCount}×, until ${e.expiresAt}): ${typeof e.value === 'string' ? e.value : JSON.stringify(e.value)}`;
        }
        const entries = await memory.shortTerm.list({ userId: scope.userId, sessionId, limit: 50 });
        return entries.length ? entries.map((e) => `${e.key} (${e.type}): ${clip(typeof e.value === 'string' ? e.value : JSON.stringify(e.value))}`).join('\n') : 'no short-term notes';
      }),
  );
}

/** Runs a tool body; typed errors become a short tool error the model can act on. */
async function run(body: () => Promise<string>): Promise<ToolResult> {
  try {
    const text = await body();
    return { content: [{ type: 'text', text: text.length > MAX_OUTPUT_CHARS ? `${text.slice(0, MAX_OUTPUT_CHARS)}\n…(truncated)` : text }] };
  } catch (err) {
    const msg = err instanceof MnemographError ? `${err.code}: ${err.message}` : `error: ${errorMessage(err)}`;
    return { content: [{ type: 'text', text: msg }], isError: true };
  }
}

function clip(s: string): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > SNIPPET ? `${one.slice(0, SNIPPET)}…` : one;
}

function conf(data: Record<string, unknown> | undefined): string {
  const c = data?.confidence;
  return typeof c === 'number' ? ` (${c.toFixed(2)})` : '';
}
