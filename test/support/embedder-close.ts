/**
 * A process that closes its local embedder while a lane embeds and a model is loading, then
 * exits by itself (test/integration/embedding.test.ts runs it: a lane terminated while
 * onnxruntime works natively aborted the whole process). Prints what became of the calls.
 */
import { createEmbedder } from '../../src/embedding';
import { testConfig } from './stack';

async function main(): Promise<void> {
  const e = createEmbedder(testConfig({ EMBEDDING_PROVIDER: 'local', EMBEDDING_MODEL: 'e5-small-v2' }).embedding);
  const outcome = (p: Promise<unknown>) =>
    p.then(
      () => 'embedded',
      () => 'rejected',
    );
  // Lanes busy loading and embedding, more queued behind them; closed at once.
  const calls = Array.from({ length: 6 }, (_, i) => outcome(e.embed([`text ${i} about a long walk by the river on a windy day`.repeat(20)])));
  await new Promise((r) => setTimeout(r, 50));
  await e.close();
  // Closing again answers the first close (its lanes sent their one 'exit' already): were it
  // waiting for another, nothing would hold the process and it would end without this line.
  await e.close();
  console.log(JSON.stringify(await Promise.all(calls)));
}

void main();
