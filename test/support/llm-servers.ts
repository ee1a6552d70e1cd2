import type { AddressInfo } from 'node:net';
import express from 'express';

/**
 * Local HTTP servers speaking the OpenAI chat-completions and Anthropic messages wire
 * formats, so the real `openai` and `@anthropic-ai/sdk` clients run end to end in tests.
 * Each answer comes from the `replies` script (in order; the last one repeats): a text the
 * "model" answers (sent once `after`, if given, settles), or an HTTP error. Requests are
 * recorded for assertions.
 *
 * As the real APIs do: when an Anthropic request forces a tool (`tool_choice: {type: 'tool'}`)
 * and the text is a JSON object, the answer is that tool's `tool_use` block (a text that is
 * not JSON stays a text block: a model that ignored the tool); `refusal` answers OpenAI's
 * `message.refusal` / Anthropic's `stop_reason: refusal`; `truncated` finishes with
 * `length` / `max_tokens`.
 */
export type LlmReply = { text: string; inputTokens?: number; outputTokens?: number; after?: Promise<unknown>; refusal?: string; truncated?: boolean } | { status: number; message: string };

export interface LlmServer {
  baseUrl: string;
  requests: Array<Record<string, unknown>>;
  /** Replaces the script of answers. */
  reply(...replies: LlmReply[]): void;
  close(): Promise<void>;
}

async function serve(setup: (app: express.Express, next: () => Promise<LlmReply>, requests: Array<Record<string, unknown>>) => void, basePath: string): Promise<LlmServer> {
  const app = express();
  app.use(express.json({ limit: '10mb' }));
  const requests: Array<Record<string, unknown>> = [];
  let script: LlmReply[] = [{ text: '{"entities":[],"facts":[],"relationships":[]}' }];
  let i = 0;
  const next = async (): Promise<LlmReply> => {
    const r = script[Math.min(i++, script.length - 1)]!;
    if ('after' in r && r.after) await r.after;
    return r;
  };
  setup(app, next, requests);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}${basePath}`,
    requests,
    reply: (...replies) => {
      script = replies;
      i = 0;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const approxTokens = (s: string) => Math.max(1, Math.ceil(s.length / 4));

function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function startOpenAIChatServer(): Promise<LlmServer> {
  return serve((app, next, requests) => {
    app.post('/v1/chat/completions', async (req, res) => {
      const body = req.body as { model: string; messages: Array<{ content: string }> };
      requests.push(body);
      const r = await next();
      if ('status' in r) {
        res.status(r.status).json({ error: { message: r.message, type: 'server_error', code: null } });
        return;
      }
      res.json({
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: r.refusal ? null : r.text, refusal: r.refusal ?? null },
            finish_reason: r.truncated ? 'length' : 'stop',
            logprobs: null,
          },
        ],
        usage: {
          prompt_tokens: r.inputTokens ?? approxTokens(body.messages.map((m) => m.content).join('\n')),
          completion_tokens: r.outputTokens ?? approxTokens(r.text),
          total_tokens: 0,
        },
      });
    });
  }, '/v1');
}

export function startAnthropicServer(): Promise<LlmServer> {
  return serve((app, next, requests) => {
    app.post('/v1/messages', async (req, res) => {
      const body = req.body as { model: string; system?: string; messages: Array<{ content: string }>; tool_choice?: { type: string; name?: string } };
      requests.push(body);
      const r = await next();
      if ('status' in r) {
        res.status(r.status).json({ type: 'error', error: { type: 'api_error', message: r.message } });
        return;
      }
      const forced = body.tool_choice?.type === 'tool' ? body.tool_choice.name : undefined;
      const input = forced ? jsonObject(r.text) : undefined;
      res.json({
        id: `msg_${requests.length}`,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: input ? [{ type: 'tool_use', id: `toolu_${requests.length}`, name: forced, input }] : [{ type: 'text', text: r.refusal ?? r.text }],
        stop_reason: r.refusal ? 'refusal' : r.truncated ? 'max_tokens' : input ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: r.inputTokens ?? approxTokens(`${body.system ?? ''}${body.messages.map((m) => m.content).join('\n')}`), output_tokens: r.outputTokens ?? approxTokens(r.text) },
      });
    });
  }, '');
}
