import type { Config } from '../config';
import { createPgPool } from '../infra/postgres';
import { PgTenantStore, type KeyRole } from '../tenancy';

/** `mnemograph keys create|revoke|list`: API keys of tenants (Postgres only; no other store needed). */
export async function keysCommand(config: Config, action: 'create' | 'revoke' | 'list', opts: { tenant?: string; name?: string; id?: string; role?: string; agent?: string }): Promise<number> {
  const pool = createPgPool(config.postgres.url, 2);
  const tenants = new PgTenantStore(pool, 0);
  try {
    if (action === 'create') {
      if (!opts.tenant) throw new Error('--tenant is required');
      const { key, info } = await tenants.createKey(opts.tenant, { name: opts.name, role: opts.role as KeyRole | undefined, agentId: opts.agent });
      const who = info.agentId ? `agent ${info.agentId} of tenant ${info.tenantId}` : `${info.role} of tenant ${info.tenantId}`;
      console.log(`key ${info.id} for ${who} (shown once; only its hash is stored):\n${key}`);
      return 0;
    }
    if (action === 'revoke') {
      if (!opts.id) throw new Error('the key id is required');
      const ok = await tenants.revokeKey(opts.id);
      console.log(ok ? `key ${opts.id} revoked` : `no live key ${opts.id}`);
      return ok ? 0 : 1;
    }
    const keys = await tenants.listKeys(opts.tenant);
    for (const k of keys) {
      console.log(
        `${k.id}  ${k.tenantId.padEnd(20)} ${(k.agentId ? `agent:${k.agentId}` : k.role).padEnd(20)} ${k.revokedAt ? 'revoked ' : 'live    '} created ${k.createdAt}  last used ${k.lastUsedAt ?? 'never'}  ${k.name}`,
      );
    }
    if (keys.length === 0) console.log('no keys');
    return 0;
  } finally {
    await pool.end();
  }
}
