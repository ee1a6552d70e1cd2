import type { ContradictionPolicy, ExtractedFact, ExtractionResult } from '../extraction/contract';
import { resolveContradiction, type StoredComparableFact } from '../extraction/contradictions';
import { errorMessage } from '../errors';
import type { Logger } from '../infra/logger';
import type { Fact, FactInput } from '../semantic/contract';
import type { KnowledgeWriter } from './contract';
import type { ConsolidationLedger } from './contract';
import { itemKey } from './pg-job-store';

/** Where the items came from: a conversation or an observation, of one user and channel. */
export interface ApplyScope {
  userId: string;
  channel: string;
  /** `conv:<id>` or `obs:<id>`: items are keyed by it in the ledger. */
  sourceId: string;
  /** A turn of the source conversation (MENTIONS), when there is one. */
  mentionTurnId?: string;
  /** When the source said it (validity windows start here unless the fact says otherwise). */
  saidAt: string;
  /** Extra fact properties (observation id, category). */
  factProperties?: Record<string, string | number | boolean>;
  /** The tool connection the source was learned on: its facts are scoped to it. */
  connectionId?: string;
}

export interface ApplyStats {
  entities: number;
  facts: number;
  reinforced: number;
  superseded: number;
  keptOld: number;
  flagged: number;
  relationships: number;
  skippedApplied: number;
}

const TURN_ID = /^[A-Za-z0-9][A-Za-z0-9_.@-]*:\d+$/;
/** Typed relationships that hold one target at a time: a new one closes the old (history kept). */
const SINGLE_TARGET_TYPES = new Set(['WORKS_FOR', 'LOCATED_IN']);

/**
 * Writes one extraction result through the facade: entities (resolved by the semantic
 * store), then facts (with contradiction detection against the active facts of the same
 * entity and predicate), then relationships. Each item is recorded in the ledger after
 * it is written, so a rerun of the same source skips it; fact ids are derived from the
 * item key, so a write that happened just before a crash is found again (idempotent).
 */
export class KnowledgeApplier {
  constructor(
    private readonly knowledge: KnowledgeWriter,
    private readonly ledger: ConsolidationLedger,
    private readonly policy: ContradictionPolicy,
    private readonly log: Logger,
  ) {}

  /**
   * `pause`, when given, is awaited before each item is written (the worker's `JobContext.pause`):
   * an item is a few statements, a window's items dozens, and interactive calls that arrive
   * meanwhile then wait behind one item rather than the window's rest.
   */
  async apply(result: ExtractionResult, scope: ApplyScope, source: string, pause?: () => Promise<void>): Promise<ApplyStats> {
    const stats: ApplyStats = { entities: 0, facts: 0, reinforced: 0, superseded: 0, keptOld: 0, flagged: 0, relationships: 0, skippedApplied: 0 };
    const keys = {
      entity: (name: string) => itemKey([scope.userId, scope.sourceId, 'entity', name]),
      fact: (f: ExtractedFact) => itemKey([scope.userId, scope.sourceId, 'fact', f.subject, f.relation, f.object, f.polarity, f.temporal, f.sourceTurnId]),
      rel: (s: string, t: string, type: string) => itemKey([scope.userId, scope.sourceId, 'rel', s, t, type]),
    };
    const allKeys = [...result.entities.map((e) => keys.entity(e.name)), ...result.facts.map(keys.fact), ...result.relationships.map((r) => keys.rel(r.source, r.target, r.type))];
    const done = await this.ledger.applied(allKeys);
    const entityIds = new Map<string, string>();

    const entityId = async (name: string, type = 'other', aliases: string[] = [], description?: string): Promise<string> => {
      const k = name.toLowerCase();
      const known = entityIds.get(k);
      if (known) return known;
      const key = keys.entity(name);
      if (done.has(key)) {
        const found = (await this.knowledge.findEntitiesByName({ userId: scope.userId, name, channels: [scope.channel] }))[0];
        if (found) {
          entityIds.set(k, found.id);
          stats.skippedApplied++;
          return found.id;
        }
      }
      await pause?.();
      const res = await this.knowledge.upsertEntity({
        userId: scope.userId,
        channel: scope.channel,
        name,
        type,
        aliases,
        description,
        sourceTurnId: scope.mentionTurnId && TURN_ID.test(scope.mentionTurnId) ? scope.mentionTurnId : undefined,
      });
      await this.ledger.mark(key, scope.userId, scope.sourceId);
      entityIds.set(k, res.entity.id);
      for (const a of aliases) entityIds.set(a.toLowerCase(), res.entity.id);
      stats.entities++;
      return res.entity.id;
    };

    for (const e of result.entities) await entityId(e.name, e.type, e.aliases, e.description);

    for (const f of result.facts) {
      const key = keys.fact(f);
      if (done.has(key)) {
        stats.skippedApplied++;
        continue;
      }
      const subjectId = await entityId(f.subject, 'person');
      await pause?.();
      const objectId = f.object ? entityIds.get(f.object.toLowerCase()) : undefined;
      // Same entity and predicate, same channel: nothing else can retire this fact.
      const existing = await this.knowledge.findFacts({ userId: scope.userId, channels: [scope.channel], entityId: subjectId, predicate: f.relation, limit: 100 });
      const sameScope = existing.filter((x) => x.status === 'active' && x.channel === scope.channel);
      const resolution = resolveContradiction(f, sameScope.map(comparable), this.policy);
      const input: FactInput = {
        userId: scope.userId,
        channel: scope.channel,
        id: `fact-${key}`,
        claim: f.claim,
        certainty: f.certainty,
        confidence: f.confidence,
        source: `extraction:${source}`,
        sourceTurnId: TURN_ID.test(f.sourceTurnId) ? f.sourceTurnId : undefined,
        temporal: f.temporal,
        ...validity(f, scope.saidAt),
        aboutEntityIds: [...new Set([subjectId, ...(objectId ? [objectId] : [])])],
        predicate: f.relation,
        connectionId: scope.connectionId,
        properties: {
          ...scope.factProperties,
          subject: f.subject,
          ...(f.object ? { object: f.object } : {}),
          polarity: f.polarity,
          single_valued: f.singleValued,
          is_correction: f.isCorrection,
          ...(f.ends ? { ends: true } : {}),
        },
      };
      switch (resolution.action) {
        case 'store': {
          const r = await this.knowledge.learnFact(input);
          if (r.reinforced) stats.reinforced++;
          else stats.facts++;
          break;
        }
        case 'supersede':
          await this.knowledge.storeFact({ ...input, supersedes: resolution.factIds });
          stats.facts++;
          stats.superseded += resolution.factIds.length;
          break;
        case 'flag':
          await this.knowledge.storeFact({ ...input, contradicts: resolution.factIds, needsReview: true });
          stats.facts++;
          stats.flagged++;
          break;
        case 'keep_old':
          this.log.info({ subsystem: 'worker', userId: scope.userId, claim: f.claim, kept: resolution.factIds }, 'contradiction: kept the existing fact (prefer_old)');
          stats.keptOld++;
          break;
      }
      await this.ledger.mark(key, scope.userId, scope.sourceId);
    }

    for (const r of result.relationships) {
      const key = keys.rel(r.source, r.target, r.type);
      if (done.has(key)) {
        stats.skippedApplied++;
        continue;
      }
      const sourceId = entityIds.get(r.source.toLowerCase());
      const targetId = entityIds.get(r.target.toLowerCase());
      if (!sourceId || !targetId || sourceId === targetId) continue;
      const temporal = r.properties.temporal;
      await pause?.();
      try {
        await this.knowledge.createRelationship({
          userId: scope.userId,
          channel: scope.channel,
          sourceId,
          targetId,
          type: r.type,
          properties: r.properties,
          sourceTurnId: r.sourceTurnId && TURN_ID.test(r.sourceTurnId) ? r.sourceTurnId : undefined,
          validFrom: temporal === 'past' ? undefined : scope.saidAt,
          replaceExisting: SINGLE_TARGET_TYPES.has(r.type) && (temporal === undefined || temporal === 'current'),
        });
        stats.relationships++;
      } catch (err) {
        // A relationship type the store refuses (reserved name) must not block the facts.
        this.log.warn({ subsystem: 'worker', type: r.type, err: errorMessage(err) }, 'skipped a relationship');
      }
      await this.ledger.mark(key, scope.userId, scope.sourceId);
    }
    return stats;
  }
}

/**
 * A fact's validity window. A change of state ("I left Feedzai") holds from the moment it
 * happened (its date, else when it was said), so the fact it supersedes closes then; a past
 * fact keeps the dates it was said with; anything else starts when it was said.
 */
function validity(f: ExtractedFact, saidAt: string): { validFrom?: string; validTo?: string } {
  if (f.ends) {
    const at = f.validTo ?? f.validFrom ?? saidAt;
    return { validFrom: at, validTo: at };
  }
  if (f.temporal === 'past') return { validFrom: f.validFrom, validTo: f.validFrom ? f.validTo : undefined };
  return { validFrom: f.validFrom ?? saidAt };
}

/** A stored fact in the shape contradiction detection compares (object/polarity live in properties). */
function comparable(f: Fact): StoredComparableFact {
  const p = f.properties;
  return {
    id: f.id,
    relation: f.predicate ?? '',
    object: typeof p.object === 'string' ? p.object : undefined,
    polarity: p.polarity === 'negative' ? 'negative' : 'positive',
    singleValued: p.single_valued === true,
    temporal: f.temporal,
  };
}
