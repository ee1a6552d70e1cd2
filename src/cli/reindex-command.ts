import { SingleBar, Presets } from 'cli-progress';
import type { Config } from '../config';
import { createMnemograph } from '../container';
import { reindexAll, vectorIndexDimensions } from '../migrate';

/**
 * `mnemograph reindex`: re-embeds everything with the configured model and records it as
 * the active one. For a model with another dimension, drop the vector indexes first
 * (the command says so); same-dimension model changes are handled here.
 */
export async function reindexCommand(config: Config, opts: { user?: string } = {}): Promise<number> {
  // The lock check would refuse a changed model at start; reindex is how one changes it.
  const m = await createMnemograph(config, { backgroundEmbedding: false, skipEmbeddingLock: true });
  const dims = await vectorIndexDimensions(m.neo4j);
  const wrong = dims.filter((d) => Number(d.dims) !== m.embedder.dimensions);
  if (wrong.length > 0) {
    await m.close();
    console.error(
      `mnemograph: vector index ${wrong[0]!.name} has ${wrong[0]!.dims} dimensions but ${m.embedder.model} has ${m.embedder.dimensions}; ` +
        'reindex re-embeds in place for models of the same dimension. For another dimension, drop the vector indexes (SHOW VECTOR INDEXES), run `mnemograph migrate`, then reindex.',
    );
    return 1;
  }
  const bar = new SingleBar({ format: '{label} [{bar}] {value}/{total} {percentage}% eta {eta}s', hideCursor: true }, Presets.shades_classic);
  let current = '';
  try {
    const counts = await reindexAll(
      m.neo4j,
      m.embedder,
      (label, done, total) => {
        if (label !== current) {
          if (current) bar.stop();
          current = label;
          bar.start(total, 0, { label: label.padEnd(8) });
        }
        bar.update(done, { label: label.padEnd(8) });
      },
      { userId: opts.user },
    );
    bar.stop();
    console.log(
      `re-embedded ${Object.entries(counts)
        .map(([l, n]) => `${n} ${l}`)
        .join(', ')} with ${m.embedder.provider}/${m.embedder.model} (${m.embedder.dimensions}-d)`,
    );
    return 0;
  } finally {
    bar.stop();
    await m.close();
  }
}
