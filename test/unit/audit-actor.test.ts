import { createHash } from 'node:crypto';
import { currentActor, NO_ACTOR, returnedIds, withActor } from '../../src/audit';
import { chainLink, linkProblem } from '../../src/audit/pg-audit-chain';
import { TenantNamespace } from '../../src/access';

describe('the audit actor context', () => {
  it('is the innermost withActor, through awaits and timers, and none outside', async () => {
    expect(currentActor()).toEqual(NO_ACTOR);
    const seen = await withActor({ tenantId: 'acme', keyId: 'k1', surface: 'http', requestId: 'r1' }, async () => {
      await new Promise((r) => setTimeout(r, 1));
      const outer = currentActor();
      const inner = await withActor({ surface: 'mcp' }, async () => {
        await Promise.resolve();
        return currentActor();
      });
      const later = await new Promise((r) => setImmediate(() => r(currentActor())));
      return { outer, inner, later };
    });
    expect(seen.outer).toMatchObject({ tenantId: 'acme', keyId: 'k1', surface: 'http', requestId: 'r1', agentId: null });
    expect(seen.inner).toMatchObject({ tenantId: 'acme', keyId: 'k1', surface: 'mcp', requestId: 'r1' });
    expect(seen.later).toEqual(seen.outer);
    expect(currentActor()).toEqual(NO_ACTOR);
  });

  it('keeps two concurrent requests apart', async () => {
    const run = (id: string, ms: number) =>
      withActor({ requestId: id }, async () => {
        await new Promise((r) => setTimeout(r, ms));
        return currentActor().requestId;
      });
    expect(await Promise.all([run('a', 5), run('b', 1)])).toEqual(['a', 'b']);
  });
});

describe('returnedIds', () => {
  it('takes the ids of items or of the nodes they wrap, in order, once each', () => {
    expect(returnedIds([{ id: 'f1' }, { turn: { id: 'c:0' }, score: 1 }, { fact: { id: 'f2' } }, { id: 'f1' }, { score: 2 }, null, 'x'])).toEqual(['f1', 'c:0', 'f2']);
  });
});

describe('TenantNamespace.tenantOf', () => {
  it('names the tenant of a namespaced id and nothing for a library id', () => {
    expect(TenantNamespace.tenantOf('acme.alice')).toBe('acme');
    expect(TenantNamespace.tenantOf('alice')).toBeNull();
    expect(TenantNamespace.tenantOf('Alice.Smith')).toBeNull();
  });
});

describe('the chain link check', () => {
  const sha = (s: string) => createHash('sha256').update(s).digest();
  const genesis = sha('day');
  const content = sha('row 1');
  const row = { chain_seq: '1', content_hash: content, row_hash: chainLink(genesis, content), redacted_at: null, digest: content };

  it('accepts a row that extends the chain and names each way one does not', () => {
    expect(linkProblem(row, genesis, 1)).toBeNull();
    expect(linkProblem({ ...row, digest: sha('edited') }, genesis, 1)).toMatch(/changed after it was written/);
    expect(linkProblem({ ...row, chain_seq: '3' }, genesis, 1)).toMatch(/positions 1..2 .* missing/);
    expect(linkProblem({ ...row, chain_seq: '1' }, genesis, 2)).toMatch(/repeats chain position 1/);
    expect(linkProblem(row, sha('another day'), 1)).toMatch(/does not link/);
    expect(linkProblem({ ...row, row_hash: null }, genesis, 1)).toMatch(/not chained/);
    // A redacted row's content is gone: its stored hash is what links it.
    expect(linkProblem({ ...row, redacted_at: new Date(), digest: sha('blanked') }, genesis, 1)).toBeNull();
  });
});
