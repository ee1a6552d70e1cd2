import cytoscape, { type Core, type ElementDefinition } from 'cytoscape';
import { useEffect, useRef } from 'react';

export interface GraphData {
  rootId: string;
  entities: Array<{ id: string; name: string; type: string }>;
  relationships: Array<{ id: string; type: string; sourceId: string; targetId: string }>;
}

/**
 * An entity's neighbourhood, drawn by Cytoscape.js (pan, zoom, drag; a click on another
 * entity opens it). Rebuilt when the data changes (another depth, another entity).
 */
export function Graph({ data, onOpen }: { data: GraphData; onOpen: (entityId: string) => void }) {
  const box = useRef<HTMLDivElement>(null);
  const cy = useRef<Core | null>(null);
  const open = useRef(onOpen);
  open.current = onOpen;

  useEffect(() => {
    if (!box.current) return undefined;
    const ids = new Set(data.entities.map((e) => e.id));
    const elements: ElementDefinition[] = [
      ...data.entities.map((e) => ({ data: { id: e.id, label: e.name, type: e.type }, classes: e.id === data.rootId ? 'root' : '' })),
      ...data.relationships.filter((r) => ids.has(r.sourceId) && ids.has(r.targetId)).map((r) => ({ data: { id: `r:${r.id}`, source: r.sourceId, target: r.targetId, label: r.type } })),
    ];
    const instance = cytoscape({
      container: box.current,
      elements,
      layout: { name: elements.length > 2 ? 'cose' : 'grid', animate: false, padding: 30 },
      wheelSensitivity: 0.3,
      style: [
        { selector: 'node', style: { label: 'data(label)', 'background-color': '#6b8fb3', color: '#1d2733', 'font-size': 11, 'text-valign': 'bottom', 'text-margin-y': 4, width: 22, height: 22 } },
        { selector: 'node.root', style: { 'background-color': '#d9822b', width: 30, height: 30, 'font-weight': 'bold' } },
        {
          selector: 'edge',
          style: { label: 'data(label)', 'font-size': 9, color: '#556', 'curve-style': 'bezier', 'target-arrow-shape': 'triangle', width: 1.5, 'line-color': '#9ab', 'target-arrow-color': '#9ab' },
        },
      ],
    });
    instance.on('tap', 'node', (e) => {
      const id = (e.target as cytoscape.NodeSingular).id();
      if (id !== data.rootId) open.current(id);
    });
    cy.current = instance;
    box.current.dataset.nodes = String(instance.nodes().length);
    box.current.dataset.edges = String(instance.edges().length);
    return () => instance.destroy();
  }, [data]);

  return <div className="graph" ref={box} data-testid="graph" />;
}
