import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { EmbedOptions, Embedder } from '../src/embedding';

/**
 * An Embedder that remembers what the real embedder returned, on disk, keyed by the sha256
 * of the text (queries keyed apart from documents). Benchmarks ingest the same corpus many
 * times (100k turns take the offline model several minutes), so reruns read vectors back
 * instead of recomputing them. Every vector in the cache was produced by `inner` for exactly
 * that text; a miss always
 * goes to `inner`. It reports the inner model's identity, so the embedding lock still holds.
 *
 * File format (append-only): records of 32 bytes of sha256 followed by `dimensions` float32.
 */
export class CachingEmbedder implements Embedder {
  readonly provider: string;
  readonly model: string;
  readonly dimensions: number;
  private readonly cache = new Map<string, number[]>();
  hits = 0;
  misses = 0;
  /** While true, every call goes to `inner` and nothing is cached (to time real queries). */
  bypass = false;

  constructor(
    private readonly inner: Embedder,
    private readonly file: string,
  ) {
    this.provider = inner.provider;
    this.model = inner.model;
    this.dimensions = inner.dimensions;
    this.load();
  }

  private load(): void {
    if (!existsSync(this.file)) return;
    const buf = readFileSync(this.file);
    const size = 32 + this.dimensions * 4;
    for (let off = 0; off + size <= buf.length; off += size) {
      const key = buf.subarray(off, off + 32).toString('hex');
      const vec = new Float32Array(buf.buffer.slice(buf.byteOffset + off + 32, buf.byteOffset + off + size));
      this.cache.set(key, Array.from(vec));
    }
  }

  get size(): number {
    return this.cache.size;
  }

  has(text: string): boolean {
    return this.cache.has(keyOfText(text));
  }

  async embed(texts: string[], opts?: EmbedOptions): Promise<number[][]> {
    if (this.bypass) return this.inner.embed(texts, opts);
    // A query and a document of the same text embed differently with instruction-trained models.
    const query = opts?.input === 'query';
    const keyOf = (text: string) => keyOfText(query ? `\u0000query\u0000${text}` : text);
    const keys = texts.map(keyOf);
    const missing = [
      ...new Set(
        keys
          .map((k, i) => (this.cache.has(k) ? -1 : i))
          .filter((i) => i >= 0)
          .map((i) => texts[i]!),
      ),
    ];
    this.hits += texts.length - missing.length;
    this.misses += missing.length;
    if (missing.length > 0) {
      const vectors = await this.inner.embed(missing, opts);
      const chunks: Buffer[] = [];
      missing.forEach((text, i) => {
        const key = keyOf(text);
        const vec = vectors[i]!;
        this.cache.set(key, vec);
        chunks.push(Buffer.from(key, 'hex'), Buffer.from(new Float32Array(vec).buffer));
      });
      mkdirSync(dirname(this.file), { recursive: true });
      appendFileSync(this.file, Buffer.concat(chunks));
    }
    return keys.map((k) => this.cache.get(k)!);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

function keyOfText(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
