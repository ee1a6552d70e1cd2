import { keyPrincipal, LOCAL_PRINCIPAL, parseTurnId, principalScope, readKeys, scopeKey, TenantNamespace, turnId, userScope, withChannels, writeKey } from '../../src/access';
import { scopedLuceneQuery } from '../../src/infra/fulltext-scope';

describe('AccessScope', () => {
  it('reads the requested channels plus _global, and writes to the first', () => {
    const s = userScope('acme.u1', { channels: ['proj', 'proj'], tenantId: 'acme' });
    expect(s).toMatchObject({ tenantId: 'acme', agentId: null, userId: 'acme.u1', channel: 'proj', channels: ['proj', '_global'] });
    expect(Object.isFrozen(s) && Object.isFrozen(s.channels)).toBe(true);
    expect(userScope('u')).toMatchObject({ channel: '_global', channels: ['_global'] });
  });

  it('keeps the principal when the channels change', () => {
    const s = withChannels(userScope('u', { tenantId: 't', agentId: 'a' }), ['x']);
    expect(s).toMatchObject({ tenantId: 't', agentId: 'a', channel: 'x', channels: ['x', '_global'] });
  });

  it('gives one scope key per readable channel, distinct per user and channel', () => {
    const keys = readKeys(userScope('u', { channels: ['a'] }));
    expect(keys).toEqual([scopeKey('u', 'a'), scopeKey('u', '_global')]);
    expect(scopeKey('u', 'a')).toMatch(/^k[0-9a-f]{24}0$/);
    expect(scopeKey('u', 'a')).not.toBe(scopeKey('v', 'a'));
  });

  it('formats and parses turn ids, and refuses what is not one', () => {
    expect(turnId('t.c1', 3)).toBe('t.c1:3');
    expect(parseTurnId('t.c1:3')).toEqual({ conversationId: 't.c1', index: 3 });
    for (const bad of ['c1', ':3', 'c1:x', 'c1:-1', 'c1:1.5']) expect(parseTurnId(bad)).toBeNull();
  });

  it("writes under the write channel's key, which a read of that channel requires", () => {
    const s = userScope('u', { channel: 'proj' });
    expect(writeKey(s)).toBe(scopeKey('u', 'proj'));
    expect(readKeys(s)).toContain(writeKey(s));
    expect(writeKey(withChannels(s, ['_global']))).toBe(scopeKey('u', '_global'));
  });

  it("puts the principal's tenant and agent into the scope, and only there", () => {
    expect(keyPrincipal(null)).toBe(LOCAL_PRINCIPAL);
    const p = keyPrincipal('acme', 'key-1');
    expect(p).toEqual({ tenantId: 'acme', keyId: 'key-1', agentId: null });
    expect(principalScope(p, 'acme.u1', { channels: ['x'] })).toMatchObject({ tenantId: 'acme', agentId: null, userId: 'acme.u1', channel: 'x', channels: ['x', '_global'] });
    expect(principalScope(LOCAL_PRINCIPAL, 'u')).toEqual(userScope('u'));
  });

  it("requires one of the scope's read keys in a full-text query, and nothing without terms", () => {
    const s = userScope('u', { channels: ['a'] });
    expect(scopedLuceneQuery(s, 'tea OR honey')).toBe(`+scope_key:(${readKeys(s).join(' ')})^0 +(tea OR honey)`);
    expect(scopedLuceneQuery(s, '  ')).toBeNull();
  });
});

describe('TenantNamespace', () => {
  it('maps ids in and out, and tells its own ids from others', () => {
    const ns = new TenantNamespace('acme');
    expect(ns.toInternal('u1', 'userId')).toBe('acme.u1');
    expect(ns.owns('acme.u1')).toBe(true);
    expect(ns.owns('acmex.u1')).toBe(false);
    expect(ns.toExternal('acme.u1')).toBe('u1');
    expect(ns.toExternal('other.u1')).toBe('other.u1');
    expect(() => ns.toInternal('x'.repeat(128), 'userId')).toThrow(/userId must be at most 123 characters/);
  });
});
