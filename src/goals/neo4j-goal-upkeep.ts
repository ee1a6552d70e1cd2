import type { CypherRunner } from '../infra/neo4j';
import type { AccessCount } from '../schemas';
import type { GoalUpkeep } from './contract';

const TAG = (op: string) => ({ subsystem: 'goals', op });

// $rows: [{id, userId, n, at}] -> {n}: access_count + n, last_accessed moved forward; the user check
// keeps a forged id from touching someone else's node
const ADD_ACCESSES = `
UNWIND $rows AS r
MATCH (n:Goal {id: r.id}) WHERE n.user_id = r.userId
SET n.access_count = coalesce(n.access_count, 0) + r.n,
    n.last_accessed = CASE WHEN n.last_accessed IS NULL OR n.last_accessed < datetime(r.at) THEN datetime(r.at) ELSE n.last_accessed END
RETURN count(n) AS n`;

/** GoalUpkeep over Neo4j. */
export class Neo4jGoalUpkeep implements GoalUpkeep {
  constructor(private readonly db: CypherRunner) {}

  async addAccessCounts(rows: AccessCount[]): Promise<number> {
    if (rows.length === 0) return 0;
    return (await this.db.write<{ n: number }>(ADD_ACCESSES, { rows }, TAG('addAccessCounts')))[0]?.n ?? 0;
  }
}
