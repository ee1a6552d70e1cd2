import type { Fact, FactCandidate, SemanticStore } from '../../semantic/contract';
import type { RecallItem, RecallSource, Signals, SourceRequest } from '../contract';
import { candidateCount, fuseHybrid, searchText, type FusionSettings } from './hybrid';
import { narrow, type ProvenanceFilter } from './narrowing';

export interface FactSourceDeps {
  store: Pick<SemanticStore, 'factCandidates' | 'recalledFacts'>;
  provenance: ProvenanceFilter;
  settings: FusionSettings;
}

/**
 * Facts for recall: full-text over claims (`fact_text_scoped`) and vector
 * (`fact_embeddings`, with the engine's query embedding) fused by weighted RRF like turns,
 * over candidates (`factCandidates`); the kept ones are then read whole (`recalledFacts`).
 * Active facts of the user in the request's channels, and the superseded ones as history:
 * a fact whose validity window has closed, that was superseded, or that was said about the
 * past is tagged `past` (the engine weighs tags by the question's tense, see currency.ts).
 * A superseded fact is shown only next to its successor (the successor is among the
 * candidates) and only when that successor records a change of state, not the correction
 * of a mistake ("I meant Cambridge": Boston was never true). Retracted facts never. Time range: the fact's `valid_from`; metadata filters: its DERIVED_FROM
 * turns. `data` carries what rendering and ranking need: predicate, object, status, `ends`
 * (the fact records that a state ended), validity and the source turn.
 */
export class SemanticFactSource implements RecallSource {
  readonly kind = 'fact' as const;

  constructor(private readonly d: FactSourceDeps) {}

  async search(req: SourceRequest): Promise<RecallItem[]> {
    const scope = req.scope;
    const q = { limit: candidateCount(req), includeInactive: true };
    const { fulltext: ft, vector: vec } = await this.d.store.factCandidates(scope, searchText(req.query), req.embedding, q);
    const byId = new Map([...ft, ...vec].map((h) => [h.item.id, h.item]));
    const shown = (f: FactCandidate) => f.status === 'active' || (f.status === 'superseded' && pastValue(f, byId));
    const fused = fuseHybrid(
      ft.filter((h) => shown(h.item)),
      vec.filter((h) => shown(h.item)),
      (f) => f.id,
      this.d.settings,
    );
    const kept = (await narrow('fact', fused, (f) => ({ id: f.item.id, timestamp: f.item.validFrom }), req, this.d.provenance)).slice(0, req.limit);
    // Only the kept candidates are read whole (at most `limit` of the ~3 × limit the searches find).
    const ids = kept.map((k) => k.item.id);
    const facts = new Map((await this.d.store.recalledFacts(scope, ids)).map((f) => [f.id, f]));
    const asOf = req.asOf ? Date.parse(req.asOf) : Date.now();
    return kept.flatMap(({ item, score, signals }) => {
      const f = facts.get(item.id);
      return f ? [toItem(f, score, signals, asOf)] : [];
    });
  }
}

function toItem(f: Fact, score: number, signals: Signals, asOf: number): RecallItem {
  return {
    id: f.id,
    kind: 'fact',
    channel: f.channel,
    text: f.claim,
    score,
    timestamp: f.validFrom,
    temporal: temporalOf(f, asOf),
    signals,
    data: {
      confidence: f.confidence,
      certainty: f.certainty,
      predicate: f.predicate,
      ...(f.properties.object !== undefined ? { object: f.properties.object } : {}),
      status: f.status,
      ...(f.properties.ends === true ? { ends: true } : {}),
      ...(f.supersededBy ? { supersededBy: f.supersededBy } : {}),
      source: f.source,
      validFrom: f.validFrom,
      validTo: f.validTo,
      aboutEntityIds: f.aboutEntityIds,
      sourceTurnId: f.sourceTurnId,
    },
  };
}

/**
 * Whether a fact holds at `asOf`: a closed validity window (valid_to passed) or a start in
 * the future overrides the tag the fact was said with ("I used to live in Riga" is `past`).
 */
export function temporalOf(f: Pick<Fact, 'temporal' | 'validFrom' | 'validTo' | 'status'>, asOf: number): 'current' | 'past' | 'future' {
  if (f.status !== 'active') return 'past';
  if (f.validTo && Date.parse(f.validTo) <= asOf) return 'past';
  if (Date.parse(f.validFrom) > asOf) return 'future';
  return f.temporal;
}

/**
 * Whether a superseded fact is history worth showing: its successor is among the candidates
 * (so the current value is shown with it; an unseen successor is not read, which would cost recall
 * a round trip) and records a change of state, not the correction of a mistake ("Sorry, I meant
 * Cambridge", `correctFact`): a corrected value was never true.
 */
function pastValue(f: FactCandidate, candidates: ReadonlyMap<string, FactCandidate>): boolean {
  const next = f.supersededBy ? candidates.get(f.supersededBy) : undefined;
  return next !== undefined && (next.properties.is_correction !== true || next.properties.ends === true);
}
