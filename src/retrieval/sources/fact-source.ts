import type { Fact, SemanticStore } from '../../semantic/contract';
import type { RecallItem, RecallSource, SourceRequest } from '../contract';
import { candidateCount, fuseHybrid, searchText, type FusionSettings } from './hybrid';
import { narrow, type ProvenanceFilter } from './narrowing';

export interface FactSourceDeps {
  store: Pick<SemanticStore, 'fullTextSearchFacts' | 'vectorSearchFacts'>;
  provenance: ProvenanceFilter;
  settings: FusionSettings;
}

/**
 * Facts for recall: full-text over claims (`fact_text_scoped`) and vector
 * (`fact_embeddings`, with the engine's query embedding) fused by weighted RRF like turns.
 * Only active facts (never superseded or retracted ones) of the user in the request's
 * channels; a fact whose validity window has closed, or that was said about the past, is
 * tagged `past` (the engine weighs it 0.7x, a current one 1.2x). Time range: the fact's
 * `valid_from`; metadata filters: its DERIVED_FROM turns.
 */
export class SemanticFactSource implements RecallSource {
  readonly kind = 'fact' as const;

  constructor(private readonly d: FactSourceDeps) {}

  async search(req: SourceRequest): Promise<RecallItem[]> {
    const scope = req.scope;
    const q = { limit: candidateCount(req) };
    const [ft, vec] = await Promise.all([
      this.d.store.fullTextSearchFacts(scope, searchText(req.query), q),
      req.embedding ? this.d.store.vectorSearchFacts(scope, req.embedding, q) : Promise.resolve([]),
    ]);
    const fused = fuseHybrid(
      ft.map((h) => ({ item: h.fact, score: h.score })),
      vec.map((h) => ({ item: h.fact, score: h.score })),
      (f) => f.id,
      this.d.settings,
    );
    const kept = await narrow('fact', fused, (f) => ({ id: f.item.id, timestamp: f.item.validFrom }), req, this.d.provenance);
    const asOf = req.asOf ? Date.parse(req.asOf) : Date.now();
    return kept.slice(0, req.limit).map(({ item: f, score, signals }) => ({
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
        source: f.source,
        validFrom: f.validFrom,
        validTo: f.validTo,
        aboutEntityIds: f.aboutEntityIds,
        sourceTurnId: f.sourceTurnId,
      },
    }));
  }
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
