import { loadConfig } from './src/config';
import { createEmbedder } from './src/embedding';
(async () => {
  const cfg = loadConfig(process.env);
  const e = createEmbedder(cfg.embedding);
  const ents = ['Pixel', 'St. Mary', 'Leeds', 'Anna: my sister', 'Google', 'Berlin', 'Vitaly, my boss: my boss', 'Acme Corp', 'Yosemite National Park', 'John Smith', 'user', 'Lisbon, Lisboa', 'Ana Souza', 'Caroline', 'LGBTQ support group', 'Melanie', 'Python', 'Toyota Corolla: my car'];
  const qs = ['what is my dog called?', 'who is my manager?', 'what car do I drive?', 'where did we go hiking?', 'what programming language do I use at work?', 'when is the wedding?', 'what did I eat yesterday?', 'how do I deploy the app?', 'which city do I live in?', 'what are my hobbies?'];
  const related: Record<string, string[]> = { 'what is my dog called?': ['Pixel'], 'who is my manager?': ['Vitaly, my boss: my boss'], 'what car do I drive?': ['Toyota Corolla: my car'], 'where did we go hiking?': ['Yosemite National Park'], 'what programming language do I use at work?': ['Python'], 'which city do I live in?': ['Leeds', 'Berlin', 'Lisbon, Lisboa'] };
  const ev = await e.embed(ents, { input: 'document' });
  const qv = await e.embed(qs, { input: 'query' });
  const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);
  const rel: number[] = [], unrel: number[] = [];
  qs.forEach((q, i) => ents.forEach((t, j) => ((related[q] ?? []).includes(t) ? rel : unrel).push((1 + cos(qv[i]!, ev[j]!)) / 2)));
  unrel.sort((a, b) => b - a); rel.sort((a, b) => b - a);
  console.log(cfg.embedding.model, 'related', rel.map((x) => x.toFixed(3)).join(' '), '| unrelated top5', unrel.slice(0, 5).map((x) => x.toFixed(3)).join(' '), 'n', unrel.length, 'fact threshold', cfg.recall.minVectorScore, 'unrelated above it', unrel.filter((x) => x >= cfg.recall.minVectorScore).length);
  await e.close();
})();
