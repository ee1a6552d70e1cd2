import { profileFactOf, type ProfileFact } from '../observations/profile';
import type { ForgettableStrategy } from '../procedural/neo4j-procedural-forgetting';
import type { ForgettableEntity, ForgettableFact, ForgettableRelationship } from '../semantic/neo4j-semantic-forgetting';
import { parseProps } from '../semantic/neo4j-semantic-store';
import type { DerivedAction, DerivedCounts, DerivedItem, DerivedKind, ForgetOptions, ForgetPlan } from './contract';

/*
 * The decisions of a delete, pure: which of what was learned from the deleted turns goes and
 * which stays, and why. The store reads the candidates (with what else supports each) and
 * carries the decisions out; the tests here need no database.
 */

/** What the owning stores found learned from the target, with what else supports each. */
export interface Candidates {
  facts: ForgettableFact[];
  relationships: ForgettableRelationship[];
  entities: ForgettableEntity[];
  strategies: ForgettableStrategy[];
  toolInvocations: Array<{ id: string; tool: string }>;
  /** Shared pool entries written from the target (their provenance names its conversation or turn). */
  poolEntries: Array<{ id: string; content: string }>;
}

const KEEP_ASKED = 'keepDerived: kept, without the link to the deleted turns';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The fact decision: a fact goes when nothing but the target's turns taught it. */
export function factAction(f: Pick<ForgettableFact, 'otherSources' | 'confirmed'>, opts: ForgetOptions): { action: DerivedAction; why: string } {
  if (opts.keepDerived) return { action: 'keep', why: KEEP_ASKED };
  if (f.otherSources.length > 0) return { action: 'keep', why: `also learned from ${plural(f.otherSources.length, 'other turn')}: only this source goes` };
  if (f.confirmed && opts.keepConfirmed) return { action: 'keep', why: 'confirmed by the user' };
  return { action: 'delete', why: 'learned only from the deleted turns' };
}

/** The entity decision, once the facts and relationships that go are gone. */
export function entityAction(e: ForgettableEntity, opts: ForgetOptions): { action: DerivedAction; why: string } {
  if (opts.keepDerived) return { action: 'keep', why: KEEP_ASKED };
  if (e.anchor) return { action: 'keep', why: "the user's own entity" };
  if (e.confirmed && opts.keepConfirmed) return { action: 'keep', why: 'confirmed by the user' };
  const reasons = [
    e.facts > 0 && `${plural(e.facts, 'other fact')} about it`,
    e.relationships > 0 && plural(e.relationships, 'other relationship'),
    e.otherConversations > 0 && `mentioned in ${plural(e.otherConversations, 'other conversation')}`,
    e.namedElsewhere && 'named in a turn that stays',
  ].filter((r): r is string => typeof r === 'string');
  if (reasons.length > 0) return { action: 'keep', why: reasons.join('; ') };
  return { action: 'delete', why: 'nothing that stays mentions it' };
}

export function strategyAction(s: ForgettableStrategy, opts: ForgetOptions): { action: DerivedAction; why: string } {
  if (opts.keepDerived) return { action: 'keep', why: KEEP_ASKED };
  if (s.otherConversations > 0) return { action: 'keep', why: `also learned in ${plural(s.otherConversations, 'other conversation')}` };
  return { action: 'delete', why: 'learned only from the deleted conversation' };
}

/** The facts' and relationships' decisions: the part of the plan that comes before the entities are counted. */
export function planKnowledge(c: Pick<Candidates, 'facts' | 'relationships'>, opts: ForgetOptions): DerivedItem[] {
  return [
    ...c.facts.map((f) => ({ kind: 'fact' as const, id: f.id, label: f.claim, ...factAction(f, opts) })),
    ...c.relationships.map((r) => ({
      kind: 'relationship' as const,
      id: r.id,
      label: r.label,
      ...(opts.keepDerived ? { action: 'keep' as const, why: KEEP_ASKED } : { action: 'delete' as const, why: 'stated only in the deleted turns' }),
    })),
  ];
}

/** The rest of the plan: entities, strategies and tool invocations. */
export function planRest(c: Pick<Candidates, 'entities' | 'strategies' | 'toolInvocations' | 'poolEntries'>, opts: ForgetOptions): DerivedItem[] {
  return [
    ...c.entities.map((e) => ({ kind: 'entity' as const, id: e.id, label: e.name, ...entityAction(e, opts) })),
    ...c.strategies.map((s) => ({ kind: 'strategy' as const, id: s.id, label: s.description, ...strategyAction(s, opts) })),
    // A tool call is part of the conversation (episodic), not something learned from it.
    ...c.toolInvocations.map((t) => ({ kind: 'toolInvocation' as const, id: t.id, label: t.tool, action: 'delete' as const, why: 'a call made in the deleted conversation' })),
    ...c.poolEntries.map((e) => ({
      kind: 'poolEntry' as const,
      id: e.id,
      label: e.content.slice(0, 200),
      ...(opts.keepDerived ? { action: 'keep' as const, why: KEEP_ASKED } : { action: 'delete' as const, why: 'a shared entry written from the deleted turns' }),
    })),
  ];
}

const KINDS: readonly DerivedKind[] = ['fact', 'relationship', 'entity', 'strategy', 'toolInvocation', 'poolEntry', 'profile'];

export function countItems(items: readonly DerivedItem[]): DerivedCounts {
  const counts = Object.fromEntries(KINDS.map((k) => [k, { delete: 0, keep: 0, restore: 0 }])) as DerivedCounts;
  for (const i of items) counts[i.kind][i.action]++;
  return counts;
}

export function toPlan(items: DerivedItem[]): ForgetPlan {
  return { items, counts: countItems(items) };
}

/** A stored fact's profile form from its row (properties as JSON text). */
export function profileClaim(claim: string, predicate: string | null, tense: string | null, propertiesJson: string | null): ProfileFact | null {
  return profileFactOf({ claim, predicate, temporal: tense, properties: parseProps(propertiesJson) });
}
