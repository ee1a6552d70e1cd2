import { randomUUID } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Config } from '../config';
import { createMnemograph } from '../container';
import { keyPrincipal, TenantNamespace } from '../access';
import { exitAfter, shutdownSignal } from '../infra/shutdown';
import { setProcessActor } from '../audit/actor';
import { createMcpServer } from './server';

/**
 * MCP over stdio for one user (`mnemograph mcp --user ID [--tenant T] [--channel C]`).
 * stdout carries only the protocol; logs go to stderr. Resolves, with the stores closed,
 * when the client hangs up (end of input) or on SIGTERM/SIGINT; if closing takes longer
 * than SHUTDOWN_TIMEOUT_MS the process exits with code 1.
 */
export async function runStdioMcp(config: Config, opts: { user: string; tenant?: string; channel?: string; conversation?: string }): Promise<void> {
  // One client per process: every row this process writes is this session's (surface mcp).
  setProcessActor({ tenantId: opts.tenant ?? null, keyId: null, agentId: null, surface: 'mcp', requestId: `mcp-stdio-${randomUUID()}` });
  const m = await createMnemograph(config);
  const ns = opts.tenant ? new TenantNamespace(opts.tenant) : undefined;
  const server = createMcpServer(
    { memory: m.memory.as(keyPrincipal(opts.tenant ?? null)), users: m.users },
    {
      userId: ns ? ns.toInternal(opts.user, 'user') : opts.user,
      channel: opts.channel ?? '_global',
      conversationId: opts.conversation,
      present: ns ? (id) => ns.toExternal(id) : undefined,
      conversation: ns ? (id) => ns.toInternal(id, 'conversationId') : undefined,
      pool: ns ? (id) => ns.toInternal(id, 'poolId') : undefined,
    },
  );
  const transport = new StdioServerTransport();
  const hungUp = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
    process.stdin.once('close', () => resolve());
  });
  await server.connect(transport);
  await shutdownSignal(hungUp);
  exitAfter(config.shutdownTimeoutMs, () => 'closing the MCP server and the stores');
  await server.close();
  await m.close();
  // The transport stops reading but does not release stdin, which would keep the process alive.
  process.stdin.destroy();
}
