/**
 * Embedding throughput of the local model (issue #22, long texts): texts/s and tokens/s of the
 * configured ONNX model on long turns (800–1,200 characters, from the LongMemEval_S
 * development sample), on a sample of all its turns and on LoCoMo's short turns, for several
 * ways of cutting a request into model runs (`OnnxBatching`), rounds alternating between them
 * so a noisy machine weighs on all alike. Requests are 32 texts each, all handed over at once,
 * as the background embedder does. Also checks each variant's vectors against the first's.
 *
 *   npm run bench:embedding -- --variants '[{"rows":16},{"rows":1}]' --rounds 3
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../src/config';
import { localModel } from '../src/embedding';
import { LocalEmbedder } from '../src/embedding/local-embedder';
import { DEFAULT_ONNX_BATCHING, type OnnxBatching } from '../src/embedding/local-models';
import { PACKAGE_ROOT as ROOT } from '../src/package-info';
import { defaultLocomoPath, loadLocomo } from './recall-datasets';

interface Options {
  dataset: string;
  texts: string;
  rounds: string;
  threads: string;
  variants: string;
  out: string;
}

const REQUEST = 32;

async function main(): Promise<void> {
  const opts = new Command()
    .option('--dataset <file>', 'LongMemEval file whose turns are embedded', resolve(ROOT, '../shared/data/longmemeval_s_dev.json'))
    .option('--texts <n>', 'texts per set', '256')
    .option('--rounds <n>', 'rounds (each embeds every set once per variant)', '3')
    .option('--threads <n>', 'embedding worker threads', '2')
    .option('--variants <json>', 'OnnxBatching variants, the first is the baseline', JSON.stringify([{ rows: 16 }, { rows: 4 }, DEFAULT_ONNX_BATCHING]))
    .option('--out <file>', 'result file', join(ROOT, 'bench/results/embedding.json'))
    .parse()
    .opts<Options>();
  const config = loadConfig(process.env);
  const spec = localModel(config.embedding.model);
  const n = Number(opts.texts);
  const records = JSON.parse(readFileSync(opts.dataset, 'utf8')) as Array<{ haystack_sessions: Array<Array<{ content: string }>> }>;
  const all = [...new Set(records.flatMap((r) => r.haystack_sessions.flatMap((s) => s.map((t) => t.content.trim())).filter((t) => t.length > 0)))];
  const every = (xs: string[]) => xs.filter((_, i) => i % Math.max(1, Math.floor(xs.length / n)) === 0).slice(0, n);
  const sets: Record<string, string[]> = {
    long_800_1200_chars: every(all.filter((t) => t.length >= 800 && t.length <= 1_200)),
    longmemeval_all_turns: every(all),
    locomo_turns: every([...new Set(loadLocomo(defaultLocomoPath()).conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => t.content))))]),
  };
  const variants = JSON.parse(opts.variants) as OnnxBatching[];
  const embedders = variants.map((batching) => new LocalEmbedder(spec, { modelDir: config.embedding.modelDir, mavenUrl: config.embedding.mavenUrl, threads: Number(opts.threads), batching }));
  const seconds: number[][][] = variants.map(() => Object.keys(sets).map(() => []));
  const vectors: number[][][][] = [];
  try {
    for (const e of embedders) await e.embed(['warm up']);
    for (let round = 0; round < Number(opts.rounds); round++) {
      for (const [v, e] of embedders.entries()) {
        for (const [s, texts] of Object.values(sets).entries()) {
          const t0 = performance.now();
          const requests = [];
          for (let i = 0; i < texts.length; i += REQUEST) requests.push(e.embed(texts.slice(i, i + REQUEST)));
          const out = (await Promise.all(requests)).flat();
          seconds[v]![s]!.push((performance.now() - t0) / 1000);
          if (round === 0) (vectors[v] ??= [])[s] = out;
        }
        console.log(`round ${round + 1}: ${JSON.stringify(variants[v])} ${seconds[v]!.map((x) => x[round]!.toFixed(1)).join(' / ')} s`);
      }
    }
  } finally {
    await Promise.all(embedders.map((e) => e.close()));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const cosine = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
  const result = {
    model: spec.id,
    threads: Number(opts.threads),
    sets: Object.fromEntries(Object.entries(sets).map(([name, texts]) => [name, { texts: texts.length, mean_chars: Math.round(texts.reduce((a, t) => a + t.length, 0) / texts.length) }])),
    variants: variants.map((batching, v) => ({
      batching,
      texts_per_second: Object.fromEntries(Object.entries(sets).map(([name, texts], s) => [name, Math.round((texts.length / median(seconds[v]![s]!)) * 10) / 10])),
      least_cosine_to_baseline: Math.round(Math.min(...Object.values(sets).flatMap((texts, s) => texts.map((_, i) => cosine(vectors[v]![s]![i]!, vectors[0]![s]![i]!)))) * 10_000) / 10_000,
    })),
    note: `median of ${opts.rounds} rounds, variants alternating; requests of ${REQUEST} texts handed over at once ("passage: " prefix), as the background embedder does`,
  };
  console.log(JSON.stringify(result, null, 2));
  mkdirSync(dirname(opts.out), { recursive: true });
  writeFileSync(opts.out, JSON.stringify(result, null, 2) + '\n');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
