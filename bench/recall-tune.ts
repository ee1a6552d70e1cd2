/**
 * Development tool (not the benchmark): compares recall settings on data a previous
 * `bench:recall -- --keep` run left in place, without re-ingesting.
 *   tsx bench/recall-tune.ts --run rbXXXX --variants '[{"name":"a","settings":{"neighbourWeight":0.3}}]'
 */
import { resolve } from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../src/config';
import { createMnemograph } from '../src/container';
import { createEmbedder } from '../src/embedding';
import { Neo4jEpisodicStore } from '../src/episodic';
import { HybridRecallEngine, RecallQuerySchema, recallSettingsFrom, type RecallSettings, type Techniques } from '../src/retrieval';
import { CachingEmbedder } from './recall-embedding-cache';
import { defaultLocomoPath, loadLocomo, loadLongMemEval, turnKey } from './recall-datasets';
import { average, percentiles, publishedSessionRecall, rankSessions, scoreQuestion, type QuestionScores } from './recall-metrics';

interface Variant {
  name: string;
  settings?: Partial<Omit<RecallSettings, 'techniques'>>;
  techniques?: Techniques;
}

async function main(): Promise<void> {
  const o = new Command()
    .requiredOption('--run <id>')
    .option('--format <f>', 'locomo | longmemeval', 'locomo')
    .option('--dataset <file>', 'dataset', defaultLocomoPath())
    .option('--variants <json>', 'variants', '[{"name":"default"}]')
    .option('--depth <n>', 'depth', '50')
    .option('--sample <n>', 'every n-th scored question only (faster, no published metric)', '1')
    .option('--misses <n>', 'print up to n questions whose gold turns missed the top 10, with what ranked instead', '0')
    .parse()
    .opts<{ run: string; format: string; dataset: string; variants: string; depth: string; sample: string; misses: string }>();
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const embedder = new CachingEmbedder(createEmbedder(config.embedding), resolve(__dirname, 'cache', `embeddings-${config.embedding.provider}-${config.embedding.model}.bin`));
  const m = await createMnemograph(config, { embedder, backgroundEmbedding: false });
  const ds = o.format === 'locomo' ? loadLocomo(resolve(o.dataset)) : loadLongMemEval(resolve(o.dataset));
  const episodic = new Neo4jEpisodicStore(m.neo4j);
  const text = new Map(ds.conversations.flatMap((c) => c.sessions.flatMap((se) => se.turns.map((t, i) => [turnKey(se.key, i), `${t.speaker}: ${t.content}`] as const))));
  let misses = Number(o.misses);
  const lastDate = new Map(ds.conversations.map((c) => [c.key, c.sessions[c.sessions.length - 1]!.date]));
  try {
    for (const v of JSON.parse(o.variants) as Variant[]) {
      const base = recallSettingsFrom(config.recall);
      const engine = new HybridRecallEngine({ episodic, embedder, settings: { ...base, ...v.settings, techniques: { ...base.techniques, ...v.techniques } }, audit: m.audit, log: m.log });
      const scores: Array<{ cat: string; s: QuestionScores }> = [];
      const published: Array<{ cat: string; r: number }> = [];
      const ms: number[] = [];
      const timing = new Map<string, number>();
      const lost = new Map<string, number>();
      const every = Number(o.sample);
      const questions = every > 1 ? ds.questions.filter((q) => q.scored).filter((_, i) => i % every === 0) : ds.questions;
      for (const q of questions) {
        const asOf = q.askedAt ?? new Date(Date.parse(lastDate.get(q.conversationKey)!) + 86_400_000).toISOString();
        const s = performance.now();
        const b = await engine.recall(RecallQuerySchema.parse({ userId: `${o.run}-${q.conversationKey}`, query: q.question, topK: Number(o.depth), asOf }));
        ms.push(performance.now() - s);
        for (const [k, t] of Object.entries(b.timings)) timing.set(k, (timing.get(k) ?? 0) + t);
        const ranked = b.turns.map((t) => turnKey(t.turn.conversationId.slice(o.run.length + 1), t.turn.index));
        if (q.scored) scores.push({ cat: q.category, s: scoreQuestion(ranked, q.goldTurns, q.goldSessions) });
        const missed = q.goldTurns.filter((g) => !ranked.slice(0, 10).includes(g));
        if (missed.length > 0 && misses-- > 0) {
          console.log(`\n[${q.category}] ${q.question}`);
          for (const g of missed) console.log(`  gold ${g} at ${ranked.indexOf(g) + 1 || '-'}: ${text.get(g)?.slice(0, 160)}`);
          for (const r of ranked.slice(0, 3)) console.log(`  top  ${r}: ${text.get(r)?.slice(0, 160)}`);
        }
        if (q.publishedGoldSessions) {
          published.push({ cat: q.category, r: publishedSessionRecall(ranked, q.publishedGoldSessions) });
          // Where each gold session the top 10 missed ranked, weighted as the metric weighs it.
          const sessions = rankSessions(ranked);
          for (const g of q.publishedGoldSessions) {
            const at = sessions.indexOf(g) + 1;
            if (at >= 1 && at <= 10) continue;
            const key = `${q.category}:${at === 0 ? 'none' : at <= 15 ? '11-15' : at <= 20 ? '16-20' : '21+'}`;
            lost.set(key, (lost.get(key) ?? 0) + 1 / q.publishedGoldSessions.length);
          }
        }
      }
      const all = average(scores.map((x) => x.s));
      const cats = [...new Set(scores.map((x) => x.cat))].sort().map((c) => `${c}:${average(scores.filter((x) => x.cat === c).map((x) => x.s)).turn_recall_at_10?.toFixed(3)}`);
      const mean = (xs: Array<{ r: number }>) => xs.reduce((a, b) => a + b.r, 0) / Math.max(1, xs.length);
      const pub = mean(published);
      const pubCats = [...new Set(published.map((p) => p.cat))].sort().map((c) => `${c}:${mean(published.filter((p) => p.cat === c)).toFixed(3)}`);
      console.log(
        `${v.name.padEnd(24)} r@10 ${all.turn_recall_at_10?.toFixed(4)} r@5 ${all.turn_recall_at_5?.toFixed(4)} ndcg ${all.ndcg_at_10?.toFixed(4)} sess ${all.session_recall_at_10?.toFixed(4)} pub ${pub.toFixed(4)} [${pubCats.join(' ')}] [${cats.join(' ')}] ms ${JSON.stringify(percentiles(ms))} ` +
          [...timing].map(([k, t]) => `${k}=${(t / questions.length).toFixed(1)}`).join(' '),
      );
      if (lost.size > 0)
        console.log(
          `  published-protocol question-weights lost, by category:session rank ("none": no turn in the depth): ${[...lost]
            .sort()
            .map(([k, n]) => `${k}=${n.toFixed(1)}`)
            .join(' ')}`,
        );
    }
  } finally {
    await m.close();
    await embedder.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
