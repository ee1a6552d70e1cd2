import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type express from 'express';
import { HttpError } from '../api/errors';
import type { ApiHelpers } from '../api/app';
import { ChannelSchema, UserIdSchema, parseInput } from '../schemas';
import { keyPrincipal, MEMORY_ROLES, TenantNamespace } from '../access';
import { withActor } from '../audit/actor';
import { createMcpServer } from './server';

/**
 * MCP over streamable HTTP at POST /v1/mcp, stateless: each request gets a fresh server
 * bound to the caller's tenant and to the user named by the `X-Mnemograph-User` header
 * (channel: `X-Mnemograph-Channel`, default `_global`). Auth and rate limits are the API's.
 */
export function mountMcp(v1: express.Router, helpers: ApiHelpers): void {
  v1.post('/mcp', async (req, res) => {
    const principal = helpers.principal(res);
    helpers.authorize(principal, MEMORY_ROLES, 'the MCP tools (they read and write memory)');
    const user = req.get('x-mnemograph-user');
    if (!user) throw new HttpError(400, 'VALIDATION_FAILED', 'send the user the tools act for in the X-Mnemograph-User header');
    const userId = parseInput(UserIdSchema, user, 'X-Mnemograph-User');
    const channel = parseInput(ChannelSchema, req.get('x-mnemograph-channel') ?? '_global', 'X-Mnemograph-Channel');
    const ns = new TenantNamespace(principal.tenantId);
    // The tools write: the request holds the user's erasure fence until it has answered (409 while an erasure runs).
    const pass = await helpers.fence.enter([ns.toInternal(userId, 'userId')]);
    res.on('close', () => void pass.release());
    await helpers.tenants.registerUsers(principal.tenantId, [userId], pass.epochs);
    const memory = helpers.context.memory.as(keyPrincipal(principal.tenantId, principal.keyId, principal.agentId));
    const server = createMcpServer(
      { ...helpers.context, memory },
      {
        userId: ns.toInternal(userId, 'userId'),
        channel,
        present: (id) => ns.toExternal(id),
        conversation: (id) => ns.toInternal(id, 'conversationId'),
        pool: (id) => ns.toInternal(id, 'poolId'),
      },
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    // The API entered the request's actor (key, request id); the tools' rows say they came through MCP.
    await withActor({ surface: 'mcp' }, async () => {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    });
  });
  const stateless = (_req: express.Request, _res: express.Response) => {
    throw new HttpError(405, 'METHOD_NOT_ALLOWED', 'this MCP endpoint is stateless: POST JSON-RPC requests only', { allowed: ['POST'] });
  };
  v1.get('/mcp', stateless);
  v1.delete('/mcp', stateless);
}
