import type { Queryable } from '../infra/postgres';
import { PgUserRows } from '../tenancy/pg-user-rows';
import type { UserDataPart } from '../tenancy/user-data';
import { defaultSettings, type MemorySettings, type SettingsStore, type SettingsUpdate } from './contract';

interface SettingsRow {
  user_id: string;
  memory_enabled: boolean;
  default_top_k: number | null;
  rerank: boolean | null;
  auto_mine: boolean;
  agent_overrides: Record<string, { recall?: boolean }>;
  updated_at: Date;
}

const COLUMNS = 'user_id, memory_enabled, default_top_k, rerank, auto_mine, agent_overrides, updated_at';

// $1 user -> the row (primary-key read)
const GET = `SELECT ${COLUMNS} FROM user_memory_settings WHERE user_id = $1`;
// $1 user, $2 memory_enabled|null, $3 set top k?, $4 top k, $5 set rerank?, $6 rerank, $7 auto_mine|null,
// $8 agent overrides to merge (jsonb), $9 agent ids to drop -> the row after the update
const UPSERT = `
INSERT INTO user_memory_settings AS s (user_id, memory_enabled, default_top_k, rerank, auto_mine, agent_overrides, updated_at)
VALUES ($1, coalesce($2, TRUE), $4, $6, coalesce($7, TRUE), $8::jsonb, NOW())
ON CONFLICT (user_id) DO UPDATE SET
  memory_enabled = coalesce($2, s.memory_enabled),
  default_top_k = CASE WHEN $3 THEN $4 ELSE s.default_top_k END,
  rerank = CASE WHEN $5 THEN $6 ELSE s.rerank END,
  auto_mine = coalesce($7, s.auto_mine),
  agent_overrides = (s.agent_overrides - $9::text[]) || $8::jsonb,
  updated_at = NOW()
RETURNING ${COLUMNS}`;
// $1 users (null: all) -> user_id of users whose automatic mining is off or memory disabled
const MINING_OFF = `SELECT user_id FROM user_memory_settings WHERE (NOT auto_mine OR NOT memory_enabled) AND ($1::text[] IS NULL OR user_id = ANY($1))`;

export class PgSettingsStore implements SettingsStore {
  constructor(private readonly pg: Queryable) {}

  async get(userId: string): Promise<MemorySettings> {
    const row = (await this.pg.query<SettingsRow>(GET, [userId])).rows[0];
    return row ? toSettings(row) : defaultSettings(userId);
  }

  async update(userId: string, patch: Omit<SettingsUpdate, 'userId'>): Promise<MemorySettings> {
    const agents = Object.entries(patch.agents ?? {});
    const merge = Object.fromEntries(agents.filter(([, v]) => v !== null));
    const drop = agents.filter(([, v]) => v === null).map(([k]) => k);
    const row = (
      await this.pg.query<SettingsRow>(UPSERT, [
        userId,
        patch.memoryEnabled ?? null,
        patch.defaultTopK !== undefined,
        patch.defaultTopK ?? null,
        patch.rerank !== undefined,
        patch.rerank ?? null,
        patch.autoMine ?? null,
        JSON.stringify(merge),
        drop,
      ])
    ).rows[0]!;
    return toSettings(row);
  }

  async miningOff(userIds: readonly string[] | null): Promise<string[]> {
    return (await this.pg.query<{ user_id: string }>(MINING_OFF, [userIds])).rows.map((r) => r.user_id);
  }

  userData(): UserDataPart {
    return new PgUserRows(this.pg, 'settings', ['user_memory_settings']);
  }
}

function toSettings(r: SettingsRow): MemorySettings {
  return {
    userId: r.user_id,
    memoryEnabled: r.memory_enabled,
    defaultTopK: r.default_top_k,
    rerank: r.rerank,
    autoMine: r.auto_mine,
    agents: r.agent_overrides,
    updatedAt: r.updated_at.toISOString(),
  };
}
