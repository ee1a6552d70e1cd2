import type { AccessScope } from '../access';
import type { ProfileFact } from '../observations/profile';

/**
 * What a delete takes with it. Deleting a turn or a conversation removes what was learned
 * only from it (facts, relationships, entities nothing else names, strategies, tool
 * invocations, shared pool entries it is the provenance of, the profile's values of those facts); what has another source keeps it and
 * loses only the link. The plan says, item by item, what goes, what stays and why; a dry
 * run is the plan alone.
 */

/** One turn (`index`) or a whole conversation (`index` undefined). */
export interface DeletionTarget {
  conversationId: string;
  index?: number;
}

export type DerivedKind = 'fact' | 'relationship' | 'entity' | 'strategy' | 'toolInvocation' | 'poolEntry' | 'profile';

/** `delete`: goes with the target; `keep`: stays (loses only its link to the target); `restore`: a fact the deleted one had replaced becomes current again. */
export type DerivedAction = 'delete' | 'keep' | 'restore';

export interface DerivedItem {
  kind: DerivedKind;
  id: string;
  /** What a person recognises it by: a fact's claim, an entity's name, "Dana WORKS_FOR Acme". */
  label: string;
  action: DerivedAction;
  why: string;
}

/** Counts per kind and action: what the report and the audit record carry (never content). */
export type DerivedCounts = Record<DerivedKind, Record<DerivedAction, number>>;

export interface ForgetPlan {
  items: DerivedItem[];
  counts: DerivedCounts;
}

export interface ForgetOutcome extends ForgetPlan {
  /** Deleted facts whose value no surviving current fact still states: they leave the profile. */
  forgottenClaims: ProfileFact[];
  /** Facts made current again: they return to the profile. */
  restoredClaims: ProfileFact[];
}

export interface ForgetOptions {
  /** Keep what was learned (only the links to the deleted turns go). */
  keepDerived: boolean;
  /** Facts the user confirmed stay even when learned only from the target (the retention rule keeps them; a person's delete does not). */
  keepConfirmed: boolean;
}

/**
 * The graph side of forgetting, in Neo4j: plans and removes what was learned from a target's
 * turns. It runs before the turns themselves go (the plan follows their DERIVED_FROM links).
 */
export interface DerivedKnowledgeStore {
  /** What would go and stay; changes nothing. */
  plan(scope: AccessScope, target: DeletionTarget, opts: ForgetOptions): Promise<ForgetOutcome>;
  /** Removes what the plan says goes, in one transaction; returns the plan it carried out. */
  forget(scope: AccessScope, target: DeletionTarget, opts: ForgetOptions): Promise<ForgetOutcome>;
}
