import type { ManagedTransaction } from 'neo4j-driver';
import { deletionParams, type AccessScope, type DeletionParams } from '../access';
import type { CypherRunner } from '../infra/neo4j';
import type { ProfileFact } from '../observations/profile';
import { poolProvenance } from '../pools/neo4j-pool-store';
import { proceduralForgetting } from '../procedural/neo4j-procedural-forgetting';
import { semanticForgetting, type RestorableFact } from '../semantic/neo4j-semantic-forgetting';
import type { DeletionTarget, DerivedItem, DerivedKnowledgeStore, ForgetOptions, ForgetOutcome } from './contract';
import { planKnowledge, planRest, profileClaim, toPlan } from './plan';

const TAG = (op: string) => ({ subsystem: 'forgetting', op });

const claimOf = (r: RestorableFact): ProfileFact | null => profileClaim(r.claim, r.predicate, r.temporal, r.props);
const ids = (items: readonly DerivedItem[], kind: DerivedItem['kind'], action: DerivedItem['action'] = 'delete') => items.filter((i) => i.kind === kind && i.action === action).map((i) => i.id);

type Read = ForgetOutcome & { repoint: Array<{ id: string; sourceTurnId: string | null }> };

/**
 * DerivedKnowledgeStore over Neo4j: the owning stores' parts of a delete (semantic,
 * procedural, pools; each names only its own labels) read and carried out in one transaction.
 */
export class Neo4jDerivedKnowledge implements DerivedKnowledgeStore {
  constructor(private readonly db: CypherRunner) {}

  plan(scope: AccessScope, target: DeletionTarget, opts: ForgetOptions): Promise<ForgetOutcome> {
    return this.db.writeTx((tx) => this.read(tx, deletionParams(scope, target.conversationId, target.index), opts), TAG('plan'));
  }

  forget(scope: AccessScope, target: DeletionTarget, opts: ForgetOptions): Promise<ForgetOutcome> {
    return this.db.writeTx(async (tx) => {
      const p = deletionParams(scope, target.conversationId, target.index);
      const outcome = await this.read(tx, p, opts);
      const { items } = outcome;
      await semanticForgetting.remove(tx, p, {
        restore: ids(items, 'fact', 'restore'),
        deleteFacts: ids(items, 'fact'),
        repoint: outcome.repoint,
        deleteRelationships: ids(items, 'relationship'),
        deleteEntities: ids(items, 'entity'),
      });
      await proceduralForgetting.remove(tx, p, { uncount: ids(items, 'strategy', 'keep'), deleteStrategies: ids(items, 'strategy'), deleteInvocations: ids(items, 'toolInvocation') });
      await poolProvenance.purge(tx, ids(items, 'poolEntry'));
      const { repoint: _, ...done } = outcome;
      return done;
    }, TAG('forget'));
  }

  /** The candidates, the plan and its consequences for the profile, read in the caller's transaction. */
  private async read(tx: ManagedTransaction, p: DeletionParams, opts: ForgetOptions): Promise<Read> {
    const facts = await semanticForgetting.facts(tx, p);
    const knowledge = planKnowledge({ facts, relationships: await semanticForgetting.relationships(tx, p) }, opts);
    const going = { goingFacts: ids(knowledge, 'fact'), goingRels: ids(knowledge, 'relationship') };
    const rest = planRest(
      {
        entities: await semanticForgetting.entities(tx, p, going),
        strategies: await proceduralForgetting.strategies(tx, p),
        toolInvocations: await proceduralForgetting.toolInvocations(tx, p),
        poolEntries: await poolProvenance.entriesFrom(tx, p.conversationId, p.turnId),
      },
      opts,
    );
    const replaced = await semanticForgetting.replaced(tx, p, going.goingFacts);
    const restoreItems = replaced.map((r): DerivedItem => ({ kind: 'fact', id: r.id, label: r.claim, action: 'restore', why: 'the fact that replaced it was learned only from the deleted turns' }));
    const gone = facts.filter((f) => going.goingFacts.includes(f.id));
    const claims = gone.flatMap((f) => (f.claimKey ? [{ predicate: f.predicate, claimKey: f.claimKey }] : []));
    const stated = await semanticForgetting.stillStated(tx, p, claims, going.goingFacts);
    const kept = new Set(ids(knowledge, 'fact', 'keep'));
    return {
      ...toPlan([...knowledge, ...restoreItems, ...rest]),
      forgottenClaims: gone.filter((f) => !stated.has(`${f.predicate}|${f.claimKey}`)).flatMap((f) => claimOf(f) ?? []),
      restoredClaims: replaced.flatMap((r) => claimOf(r) ?? []),
      repoint: facts.filter((f) => kept.has(f.id) && f.sourcedHere).map((f) => ({ id: f.id, sourceTurnId: f.otherSources[0] ?? null })),
    };
  }
}
