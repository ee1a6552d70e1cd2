import type { Config } from '../config';
import { createPgPool } from '../infra/postgres';
import { PgTenantStore } from '../tenancy';

/** `mnemograph keys create|revoke|list`: API keys of tenants (Postgres only; no other store needed). */
export async function keysCommand(config: Config, action: 'create' | 'revoke' | 'list', opts: { tenant?: string; name?: string; id?: string }): Promise<number> {
  const pool = createPgPool(config.postgres.url, 2);
  const tenants = new PgTenantStore(pool, 0);
  try {
    if (action === 'create') {
      if (!opts.tenant) throw new Error('--tenant is required');
      const { key, info } = await tenants.createKey(opts.tenant, opts.name ?? '');
      console.log(`key ${info.id} for tenant ${info.tenantId} (shown once; only its hash is stored):\n${key}`);
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
      console.log(`${k.id}  ${k.tenantId.padEnd(20)} ${k.revokedAt ? 'revoked ' : 'live    '} created ${k.createdAt}  last used ${k.lastUsedAt ?? 'never'}  ${k.name}`);
    }
    if (keys.length === 0) console.log('no keys');
    return 0;
  } finally {
    await pool.end();
  }
}
