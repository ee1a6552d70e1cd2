import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Config } from '../config';
import { createMnemograph } from '../container';
import { keyPrincipal, TenantNamespace } from '../access';
import { createMcpServer } from './server';

/**
 * MCP over stdio for one user (`mnemograph mcp --user ID [--tenant T] [--channel C]`).
 * stdout carries only the protocol; logs go to stderr. Resolves when the client hangs up.
 */
export async function runStdioMcp(config: Config, opts: { user: string; tenant?: string; channel?: string; conversation?: string }): Promise<void> {
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
    },
  );
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
  await m.close();
}
