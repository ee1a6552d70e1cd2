import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { defaultLocomoPath, loadLocomo } from '../../bench/recall-datasets';
import { eventually, uid } from '../support/stack';
import { openHarness, seedUser, type Harness, type SeededUser } from '../integration/api-harness';

/**
 * The studio in a real headless Chromium (Debian's, driven by playwright-core) against a real
 * server over the real stores: sign-in and a wrong key, browsing a user (LoCoMo conversation 0
 * when the dataset is there) and a 10,000-turn conversation (virtualised: only a window of
 * rows in the DOM), search and explain, the entity graph and its depth, correcting and
 * retracting a fact as the timeline shows it, deleting after a confirmation, a reviewer key,
 * and another tenant. Screenshots go to .mnemograph/studio-screenshots (git-ignored); the
 * measurements to bench/results/studio.json.
 */
const ROOT = join(__dirname, '..', '..');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = join(ROOT, '.mnemograph', 'studio-screenshots');
const LONG = 10_000;

let h: Harness;
let browser: Browser;
let A: { tenantId: string; key: string; keyId: string };
let B: { tenantId: string; key: string; keyId: string };
let u: SeededUser;
let portugalId: string;
let locomo: { userId: string; conversationId: string } | null = null;
const long = { userId: uid('long'), conversationId: uid('c') };
const measured: Record<string, unknown> = {};

const describeIf = existsSync(CHROMIUM) ? describe : describe.skip;

describeIf('studio in headless Chromium', () => {
  beforeAll(async () => {
    // Built once per run, only when missing or older than its sources (a fresh clone builds it here).
    execFileSync('node', [join(ROOT, 'studio', 'build.mjs'), '--if-stale'], { cwd: ROOT, stdio: 'inherit', timeout: 240_000 });
    mkdirSync(SHOTS, { recursive: true });
    h = await openHarness();
    [A, B] = [await h.tenant(), await h.tenant()];
    u = await seedUser(h, A.key);
    // A chain of places, so depth 2 reaches further than depth 1.
    const place = async (name: string) => (await h.call(A.key, 'POST', '/v1/entities', { userId: u.userId, name, type: 'place' })).body.entity.id as string;
    portugalId = await place('Portugal');
    const europe = await place('Europe');
    for (const [sourceId, targetId] of [
      [u.personId, u.entityId],
      [u.entityId, portugalId],
      [portugalId, europe],
    ]) {
      expect((await h.call(A.key, 'POST', '/v1/relationships', { userId: u.userId, sourceId, targetId, type: sourceId === u.personId ? 'LOCATED_IN' : 'PART_OF' })).status).toBe(201);
    }
    // 10,000 turns in one conversation, in one batch call.
    const turns = Array.from({ length: LONG }, (_, i) => ({ ...long, role: i % 2 ? 'assistant' : 'user', content: `Turn ${i} of a very long conversation about trains, tides and timetables.` }));
    const t0 = performance.now();
    expect((await h.call(A.key, 'POST', '/v1/turns/batch', { turns })).status).toBe(201);
    measured.seed10kTurnsMs = Math.round(performance.now() - t0);
    // LoCoMo conversation 0, when the dataset is on this machine.
    const path = defaultLocomoPath();
    if (existsSync(path)) {
      const conv = loadLocomo(path).conversations[0]!;
      locomo = { userId: uid('locomo'), conversationId: uid('c') };
      const rows = conv.sessions.slice(0, 3).flatMap((s, si) =>
        s.turns.map((t, i) => ({
          userId: locomo!.userId,
          conversationId: `${locomo!.conversationId}-s${si}`,
          role: t.role,
          content: t.content,
          timestamp: new Date(Date.parse(s.date) + i * 60_000).toISOString(),
          metadata: { speaker: t.speaker },
        })),
      );
      expect((await h.call(A.key, 'POST', '/v1/turns/batch', { turns: rows })).status).toBe(201);
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
    if (Object.keys(measured).length > 0) {
      mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
      writeFileSync(join(ROOT, 'bench', 'results', 'studio.json'), JSON.stringify({ at: new Date().toISOString(), ...measured }, null, 2) + '\n');
    }
  });

  /** A fresh tab signed in with `key` (sessionStorage is per tab: a new context is a new person). */
  async function signedIn(key: string, path = '/studio/'): Promise<Page> {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
    await page.goto(h.url + path);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('whoami').waitFor();
    return page;
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`) });

  it('serves the app at /studio with its cache headers; client-side routes get index.html; no auth for the files', async () => {
    const index = await fetch(`${h.url}/studio/users/anyone/search`);
    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(index.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await index.text();
    const asset = /\/studio\/assets\/index-[\w-]+\.js/.exec(html)![0];
    const js = await fetch(h.url + asset);
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toMatch(/immutable/);
    expect((await fetch(`${h.url}/studio/assets/nope.js`)).status).toBe(404);
  });

  it('refuses a wrong key, and signs in with a good one', async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${h.url}/studio/`);
    await page.getByLabel('API key').fill('mg_000000000000_' + 'x'.repeat(43));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectText(page.getByTestId('signin-error'), /401 INVALID_API_KEY/);
    await page.close();

    const t0 = performance.now();
    const admin = await signedIn(A.key);
    await admin.getByTestId('users').waitFor();
    measured.firstUsefulRenderMs = Math.round(performance.now() - t0);
    expect(await admin.getByTestId('whoami').textContent()).toContain(`${A.tenantId} · admin`);
    await shot(admin, 'users');
    await admin.close();
  });

  it('browses a user as a tree: channels, conversations, entities, facts, goals', async () => {
    const target = locomo ?? { userId: u.userId, conversationId: u.conversationId };
    const page = await signedIn(A.key);
    await page.getByRole('link', { name: target.userId }).click();
    const tree = page.getByTestId('tree');
    await tree.waitFor();
    await expectText(tree, /#_global/);
    if (locomo) await expectText(tree, new RegExp(`${locomo.conversationId}-s0`));
    await page.goto(`${h.url}/studio/users/${u.userId}`);
    await expectText(page.getByTestId('entities'), /Lisbon/);
    await expectText(page.getByTestId('facts-current'), /The user lives in Lisbon/);
    await expectText(page.getByTestId('goals'), /Find a flat in Lisbon/);
    await shot(page, 'browse');
    await page.close();
  });

  it('pages a 10,000-turn conversation with only a window of rows in the DOM', async () => {
    const page = await signedIn(A.key, `/studio/users/${long.userId}/conversations/${long.conversationId}`);
    const t0 = performance.now();
    await page.getByTestId('turn-row').first().waitFor();
    measured.firstTurnsRenderMs = Math.round(performance.now() - t0);
    await expectText(page.getByTestId('turn-total'), /10,000 turns/);
    const rowsAtTop = await page.getByTestId('turn-row').count();
    expect(rowsAtTop).toBeGreaterThan(5);
    expect(rowsAtTop).toBeLessThan(100);
    // Scroll down to the last turn (pages load as the list reaches their end), timing the frames meanwhile.
    // Browser code (a string: this file is type-checked without the DOM library).
    const t1 = performance.now();
    const frames = await page.evaluate<{ frames: number; p50: number; p95: number; max: number; maxRowsInDom: number }>(`(async () => {
      const box = document.querySelector('[data-testid="turns"]');
      const gaps = [];
      let maxRows = 0;
      let last = performance.now();
      const deadline = last + 90000;
      while (!document.querySelector('[data-index="9999"]') && performance.now() < deadline) {
        box.scrollTop += 1500;
        await new Promise((r) => requestAnimationFrame(() => r(null)));
        const now = performance.now();
        gaps.push(now - last);
        last = now;
        maxRows = Math.max(maxRows, document.querySelectorAll('[data-testid="turn-row"]').length);
      }
      gaps.sort((a, b) => a - b);
      return { frames: gaps.length, p50: gaps[Math.floor(gaps.length / 2)], p95: gaps[Math.floor(gaps.length * 0.95)], max: gaps[gaps.length - 1], maxRowsInDom: maxRows };
    })()`);
    await page.locator('[data-index="9999"]').waitFor();
    measured.scrollTo10kMs = Math.round(performance.now() - t1);
    measured.scroll10kFrames = frames;
    expect(frames.maxRowsInDom).toBeLessThan(100);
    await shot(page, 'conversation-10k');
    await page.close();
  }, 120_000);

  it('searches and explains: each recalled item with its signals, the timings and the prompt block', async () => {
    const page = await signedIn(A.key, `/studio/users/${u.userId}/search`);
    await page.getByLabel('query', { exact: true }).fill('Where does the user live? Lisbon');
    await page.getByRole('button', { name: 'Recall' }).click();
    await page.getByTestId('recalled-turn').first().waitFor();
    await expectText(page.getByTestId('recalled-turn').first(), /fulltext|vector/);
    await expectText(page.getByTestId('context'), /Lisbon/);
    expect(await page.getByTestId('signal').count()).toBeGreaterThan(0);
    await shot(page, 'search');
    // Full-text switched off for this query: no turn says full-text found it (facts and entities keep their own sources).
    await page.getByLabel('technique fulltext').selectOption('off');
    await page.getByRole('button', { name: 'Recall' }).click();
    await eventually(
      async () => {
        const turns = await page.getByTestId('recalled-turn').allTextContents();
        return turns.length > 0 && turns.every((t) => !t.includes('fulltext #') && t.includes('vector #'));
      },
      'a recall whose turns were found without full-text',
      30_000,
    );
    await page.close();
  });

  it('draws the entity graph (Cytoscape canvas) and the depth changes it', async () => {
    const page = await signedIn(A.key, `/studio/users/${u.userId}/entities/${u.entityId}`);
    const graph = page.getByTestId('graph');
    await graph.locator('canvas').first().waitFor();
    await eventually(async () => (await graph.getAttribute('data-nodes')) === '3', 'depth 1: Lisbon, Ana Souza, Portugal');
    await page.getByTestId('depth').selectOption('2');
    await eventually(async () => (await graph.getAttribute('data-nodes')) === '4', 'depth 2 reaches Europe');
    await shot(page, 'entity');
    await page.close();
  });

  it('corrects and retracts a fact and shows both in the timeline, audited with the key', async () => {
    const page = await signedIn(A.key, `/studio/users/${u.userId}/entities/${u.entityId}`);
    const facts = page.getByTestId('entity-facts');
    const lisbon = facts.getByTestId('fact').filter({ hasText: 'The user lives in Lisbon' });
    await lisbon.getByRole('button', { name: 'correct' }).click();
    await page.getByLabel('corrected claim').fill('The user lives in Porto');
    await page.getByRole('button', { name: 'Save correction' }).click();
    const timeline = page.getByTestId('timeline');
    await expectText(timeline.getByTestId('supersedes'), /superseded by “The user lives in Porto”/);
    const porto = facts.locator('[data-status="active"]').filter({ hasText: 'The user lives in Porto' });
    await porto.getByRole('button', { name: 'retract' }).click();
    await page.getByLabel('reason').fill('moved again');
    await page.getByRole('button', { name: 'Retract', exact: true }).click();
    await facts.locator('[data-status="retracted"]').filter({ hasText: 'The user lives in Porto' }).waitFor();
    await expectText(timeline, /The user lives in Porto retracted/);
    await shot(page, 'timeline');
    await page.close();
    await h.m.audit.flush();
    const rows = await h.m.pg.primary.query('SELECT operation FROM memory_audit_log WHERE user_id = $1 AND operation IN ($2, $3) ORDER BY timestamp', [
      `${A.tenantId}.${u.userId}`,
      'correct_fact',
      'retract_fact',
    ]);
    expect(rows.rows.map((r) => r.operation)).toEqual(['retract_fact', 'correct_fact', 'retract_fact']); // the seed retracted one fact first
  });

  it('shows the pools the key may read: grants, entries, version history; grants, revokes and restores a version, audited with the key', async () => {
    // A second version, so there is an earlier one to restore.
    expect((await h.call(A.key, 'PUT', u.e, { content: 'The deposit for the Lisbon flat is three months of rent.' })).status).toBe(200);
    const page = await signedIn(A.key);
    await page.getByRole('link', { name: 'Pools' }).click();
    await page.getByTestId('pools').getByRole('link', { name: 'housing desk' }).click();
    const grants = page.getByTestId('grants');
    await expectText(grants, /reader read/);
    await page.getByLabel('grant agent').fill('planner');
    await page.getByLabel('grant level').selectOption('write');
    await page.getByRole('button', { name: 'Grant' }).click();
    await expectText(grants, /planner write/);
    await page.getByRole('button', { name: 'revoke reader' }).click();
    await eventually(async () => !((await grants.textContent()) ?? '').includes('reader'), 'reader revoked');
    const entry = page.getByTestId('pool-entry').first();
    await expectText(entry, /three months of rent.*v2/);
    await entry.getByRole('button', { name: 'history' }).click();
    await expectText(page.getByTestId('versions'), /v1 create.*v2 update/);
    await page.getByRole('button', { name: 'restore v1' }).click();
    await expectText(page.getByTestId('pool-entry').first(), /two months of rent.*v3/);
    await shot(page, 'pools');
    await page.close();
    await h.m.audit.flush();
    const rows = await h.m.pg.primary.query(
      "SELECT operation, metadata FROM memory_audit_log WHERE tenant_id = $1 AND operation IN ('grant_pool_access', 'revoke_pool_access', 'restore_pool_entry') AND metadata->>'poolId' = $2 ORDER BY timestamp",
      [A.tenantId, `${A.tenantId}.${u.poolId}`],
    );
    expect(rows.rows.map((r) => [r.operation, r.metadata.actor.keyId])).toEqual([
      ['grant_pool_access', A.keyId],
      ['revoke_pool_access', A.keyId],
      ['restore_pool_entry', A.keyId],
    ]);
  });

  it('shows the operations page to an admin key: store health, backlogs, LLM calls, job runs; not to a reviewer', async () => {
    // One real job run, so the jobs table has a row.
    const worker = h.m.createWorker();
    try {
      expect((await worker.runJob('short_term')).status).toBe('succeeded');
    } finally {
      await worker.stop();
    }
    const page = await signedIn(A.key);
    await page.getByRole('link', { name: 'Operations' }).click();
    await expectText(page.getByTestId('ops-stores'), /neo4j: up.*postgres: up.*redis: up/);
    await expectText(page.getByTestId('ops-backlogs'), /embedding backlog: [\d,]+ turns.*consolidation: [\d,]+ conversations waiting/);
    await expectText(page.getByTestId('ops-llm'), /calls \(\d+ failed\)/);
    await expectText(page.getByTestId('ops-jobs'), /short_term.*succeeded/);
    await shot(page, 'ops');
    await page.close();
    const reviewer = await signedIn((await h.srv.api.tenants.createKey(A.tenantId, { name: 'review', role: 'reviewer' })).key);
    expect(await reviewer.getByRole('link', { name: 'Operations' }).count()).toBe(0);
    await reviewer.goto(`${h.url}/studio/ops`);
    await expectText(reviewer.locator('main'), /for admin keys/);
    await reviewer.close();
  });

  it('downloads a user’s export from the browse page: the JSON lines of `mnemograph export`', async () => {
    const page = await signedIn(A.key, `/studio/users/${u.userId}`);
    await page.getByTestId('tree').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download export' }).click()]);
    expect(download.suggestedFilename()).toBe(`mnemograph-export-${u.userId}.jsonl`);
    const lines = readFileSync(await download.path(), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ kind: 'header', format: 'mnemograph-user-export', userId: u.userId });
    expect(lines.some((l) => l.kind === 'node' && l.labels.includes('Strategy'))).toBe(true);
    await expectText(page.getByTestId('export-done'), new RegExp(`${lines.length} lines`));
    await expectText(page.getByTestId('strategies'), /Search listings then compare prices/);
    await page.close();
  });

  it('deletes a conversation after a confirmation that says what goes; recall no longer finds it', async () => {
    const page = await signedIn(A.key, `/studio/users/${u.userId}/conversations/${u.conversationId}`);
    await page.getByTestId('turn-row').first().waitFor();
    await page.getByRole('button', { name: 'Delete conversation…' }).click();
    await expectText(page.getByTestId('deletion-summary'), /Would delete the conversation \(channel _global\): 2 turns and its working memory; learned only from them: 1 fact/);
    await expectText(page.getByTestId('derived-goes'), /The user lives in Lisbon — learned only from the deleted turns/);
    await expectText(page.getByTestId('derived-goes'), /tool call search_listings — a call made in the deleted conversation/);
    await shot(page, 'delete-confirm');
    await page.getByTestId('confirm').click();
    await page.getByTestId('tree').waitFor();
    expect(await page.getByTestId('tree').textContent()).not.toContain(u.conversationId);
    await page.close();
    const recall = await h.call(A.key, 'POST', '/v1/recall', { userId: u.userId, query: 'I moved to Lisbon last spring' });
    expect(recall.body.turns.filter((t: any) => t.turn.conversationId === u.conversationId)).toEqual([]);
  });

  it('a reviewer key sees the users’ counts and the audit page, no memory pages; memory routes answer 403', async () => {
    const reviewer = (await h.srv.api.tenants.createKey(A.tenantId, { name: 'review', role: 'reviewer' })).key;
    const page = await signedIn(reviewer);
    await page.getByTestId('users').waitFor();
    expect(await page.getByRole('link', { name: u.userId }).count()).toBe(0);
    await page.goto(`${h.url}/studio/users/${u.userId}`);
    await page.getByTestId('no-memory').waitFor();
    expect(await page.locator('body').textContent()).not.toContain('Lisbon');
    await page.getByRole('link', { name: 'Audit' }).click();
    await page.getByTestId('audit').waitFor();
    await expectText(page.getByTestId('audit-rows'), /correct_fact/);
    await shot(page, 'audit');
    await page.close();
    for (const path of [`/v1/users/${u.userId}/conversations`, `/v1/users/${u.userId}/facts`, `/v1/users/${u.userId}/entities`]) {
      expect((await h.call(reviewer, 'GET', path)).status).toBe(403);
    }
  });

  it("another tenant's key never shows this tenant's data", async () => {
    const page = await signedIn(B.key);
    await page.getByText('This tenant has no users yet.').waitFor();
    await page.goto(`${h.url}/studio/users/${u.userId}`);
    await expectText(page.locator('main'), /404 NOT_FOUND/);
    await page.goto(`${h.url}/studio/users/${u.userId}/entities/${u.entityId}`);
    await expectText(page.locator('main'), /404 NOT_FOUND/);
    expect(await page.locator('body').textContent()).not.toMatch(/Lisbon|Ana Souza/);
    await page.close();
  });
});

/** Waits until the locator's text matches (the app renders asynchronously). */
async function expectText(locator: ReturnType<Page['locator']>, re: RegExp): Promise<void> {
  await eventually(async () => re.test((await locator.first().textContent()) ?? ''), `text ${re}`, 20_000);
}
