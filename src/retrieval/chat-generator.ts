import { errorMessage } from '../errors';
import type { Logger } from '../infra/logger';
import { usageOf, type ChatModel, type UsageSink } from '../llm';
import type { TextGenerator } from './contract';

const SYSTEM = 'You help a memory search engine find the right messages. Answer briefly, with no preamble.';

/**
 * The recall LLM (HyDE, query expansion, self-query, reranking) over a chat model. Each call's tokens and cost
 * are recorded (purpose `recall`) after the answer is returned, off the request path.
 */
export class ChatTextGenerator implements TextGenerator {
  constructor(
    private readonly chat: ChatModel,
    private readonly log: Logger,
    private readonly usage?: UsageSink,
  ) {}

  async generate(prompt: string, opts: { maxTokens?: number; userId?: string } = {}): Promise<string> {
    const t0 = performance.now();
    try {
      const res = await this.chat.complete({ system: SYSTEM, user: prompt, maxTokens: opts.maxTokens ?? 120 });
      this.record(opts.userId, res.inputTokens, res.outputTokens, t0);
      return res.text.trim();
    } catch (err) {
      this.record(opts.userId, 0, 0, t0, errorMessage(err));
      throw err;
    }
  }

  private record(userId: string | undefined, inputTokens: number, outputTokens: number, t0: number, error?: string): void {
    if (!this.usage || !userId) return;
    this.usage.record({ ...usageOf(this.chat, inputTokens, outputTokens, performance.now() - t0), userId, purpose: 'recall', ok: error === undefined, error }).catch((err: unknown) => {
      this.log.warn({ subsystem: 'retrieval', err: errorMessage(err) }, 'could not record LLM usage');
    });
  }
}
