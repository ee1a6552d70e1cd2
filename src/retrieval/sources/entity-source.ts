import type { Entity, Relationship, SemanticStore } from '../../semantic/contract';
import type { RecallItem, RecallSource, Signals, SourceRequest } from '../contract';
import { candidateCount, fuseHybrid, searchText, type FusionSettings } from './hybrid';
import { narrow, type ProvenanceFilter } from './narrowing';

export interface EntitySourceDeps {
  store: Pick<SemanticStore, 'entityCandidates' | 'recalledEntities' | 'expandEntities'>;
  provenance: ProvenanceFilter;
  settings: FusionSettings & {
    minEntityVectorScore: number;
    /** Hops of graph expansion from the matched entities (0 = none, at most 3). */
    entityDepth: number;
  };
  /** Most entities graph expansion may add to one recall (default 20). */
  maxExpanded?: number;
}

/** Share of its parent's score an entity reached by expansion keeps, per hop. */
const HOP_DECAY = 0.5;
/** Relationships listed on one entity line. */
const MAX_RELATED = 5;

/**
 * Entities for recall: full-text over names, aliases and descriptions plus vector, fused
 * by RRF; then expanded through currently valid typed relationships up to `entityDepth`
 * hops (one bounded query per hop, at most `maxExpanded` new entities). An entity reached
 * by expansion scores its parent's score halved per hop and says how it was reached
 * (`signals.graph`); a matched entity lists its direct relationships in `related`.
 * Time range: the entity's last update; metadata filters: conversations that MENTION it.
 */
export class SemanticEntitySource implements RecallSource {
  readonly kind = 'entity' as const;

  constructor(private readonly d: EntitySourceDeps) {}

  async search(req: SourceRequest): Promise<RecallItem[]> {
    const scope = req.scope;
    const q = { limit: candidateCount(req) };
    const { fulltext, vector } = await this.d.store.entityCandidates(scope, searchText(req.query), req.embedding, q);
    const fused = fuseHybrid(fulltext, vector, (e) => e.id, { ...this.d.settings, minVectorScore: this.d.settings.minEntityVectorScore });
    const kept = (await narrow('entity', fused, (f) => ({ id: f.item.id, timestamp: f.item.updatedAt }), req, this.d.provenance)).slice(0, req.limit);
    const depth = Math.min(Math.max(Math.trunc(this.d.settings.entityDepth), 0), 3);
    const maxExpanded = this.d.maxExpanded ?? 20;
    const expand = kept.length > 0 && depth > 0 && maxExpanded > 0;
    // The kept candidates (at most `limit`) are read whole while the graph is expanded from them.
    const ids = kept.map((k) => k.item.id);
    const [rows, graph] = await Promise.all([this.d.store.recalledEntities(scope, ids), expand ? this.d.store.expandEntities(scope, ids, depth, maxExpanded) : undefined]);
    const whole = new Map(rows.map((e) => [e.id, e]));
    const roots = kept.flatMap((k) => {
      const item = whole.get(k.item.id);
      return item ? [{ ...k, item }] : [];
    });
    if (!graph) return roots.map((r) => toItem(r.item, r.score, r.signals));

    const byId = new Map([...roots.map((r) => r.item), ...graph.entities].map((e) => [e.id, e]));
    const adjacent = adjacency(graph.relationships);
    const rootIds = new Set(roots.map((r) => r.item.id));

    // Breadth-first from each matched entity, best first: an expanded entity keeps the best
    // score any root gives it and the path that gave it.
    const reached = new Map<string, { score: number; hop: number; via: string }>();
    for (const root of roots) {
      let frontier = [root.item.id];
      const seen = new Set(frontier);
      for (let hop = 1; hop <= depth && frontier.length > 0; hop++) {
        const next: string[] = [];
        for (const from of frontier) {
          for (const edge of adjacent.get(from) ?? []) {
            if (seen.has(edge.other)) continue;
            seen.add(edge.other);
            next.push(edge.other);
            const score = root.score * HOP_DECAY ** hop;
            const prev = reached.get(edge.other);
            if (!rootIds.has(edge.other) && byId.has(edge.other) && (!prev || score > prev.score)) {
              reached.set(edge.other, { score, hop, via: `${byId.get(from)?.name ?? from} ${edge.relation}` });
            }
          }
        }
        frontier = next;
      }
    }
    const expanded = [...reached].map(([id, r]) => ({ entity: byId.get(id)!, ...r })).sort((a, b) => b.score - a.score || a.hop - b.hop || a.entity.id.localeCompare(b.entity.id));
    const keptExpanded = (await narrow('entity', expanded, (x) => ({ id: x.entity.id, timestamp: x.entity.updatedAt }), req, this.d.provenance)).slice(0, maxExpanded);

    const related = (id: string) =>
      (adjacent.get(id) ?? [])
        .filter((edge) => byId.has(edge.other))
        .slice(0, MAX_RELATED)
        .map((edge) => ({ id: edge.other, text: byId.get(edge.other)!.name, relation: edge.relation }));
    const items = [
      ...roots.map((r) => toItem(r.item, r.score, r.signals, related(r.item.id))),
      ...keptExpanded.map((x) => toItem(x.entity, x.score, { graph: { rank: x.hop, note: `depth ${x.hop} via ${x.via}` } })),
    ];
    return items.sort((a, b) => b.score - a.score);
  }
}

interface Edge {
  other: string;
  /** Direction-aware label: `-WORKS_FOR->` from the source's side, `<-WORKS_FOR-` from the target's. */
  relation: string;
}

function adjacency(rels: Relationship[]): Map<string, Edge[]> {
  const out = new Map<string, Edge[]>();
  const add = (from: string, edge: Edge) => out.set(from, [...(out.get(from) ?? []), edge]);
  for (const r of rels) {
    add(r.sourceId, { other: r.targetId, relation: `-${r.type}->` });
    add(r.targetId, { other: r.sourceId, relation: `<-${r.type}-` });
  }
  return out;
}

function toItem(e: Entity, score: number, signals: Signals, related?: RecallItem['related']): RecallItem {
  const aliases = e.aliases.filter((a) => a !== e.name);
  const aka = aliases.length > 0 ? `, aka ${aliases.slice(0, 3).join(', ')}` : '';
  return {
    id: e.id,
    kind: 'entity',
    channel: e.channel,
    text: `${e.name} (${e.type}${aka})${e.description ? `: ${e.description}` : ''}`,
    score,
    timestamp: e.updatedAt,
    signals,
    ...(related && related.length > 0 ? { related } : {}),
    data: { name: e.name, type: e.type, aliases: e.aliases, salience: e.salience, mentionCount: e.mentionCount },
  };
}
