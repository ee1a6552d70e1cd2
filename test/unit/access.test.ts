import { parseTurnId, readKeys, scopeKey, turnId, userScope, withChannels } from '../../src/access';

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
});
