import { useMemo } from 'react';
import { Background, Controls, Handle, MarkerType, Position, ReactFlow, type Edge, type Node, type NodeProps } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { layeredLayout } from './layout';
import { edgeKey, graphOf } from './definition';

interface StepData extends Record<string, unknown> {
  id: string;
  type: string;
  name?: string;
  invalid: boolean;
  trigger: boolean;
  vertical: boolean;
}

const CATEGORY_TONE: Record<string, string> = {
  trigger: 'border-l-violet-500',
  flow: 'border-l-amber-500',
  ai: 'border-l-indigo-500',
  leads: 'border-l-emerald-500',
  content: 'border-l-sky-500',
  messaging: 'border-l-teal-500',
  utility: 'border-l-slate-500',
  data: 'border-l-slate-400',
};

function StepNode({ data }: NodeProps<Node<StepData>>) {
  const tone = CATEGORY_TONE[data.type.split('.')[0] ?? ''] ?? 'border-l-slate-400';
  return (
    <div
      className={`w-52 rounded-md border border-l-4 bg-white px-3 py-2 text-left shadow-sm ${tone} ${data.invalid ? 'border-red-500 ring-2 ring-red-400' : 'border-slate-200'}`}
      aria-invalid={data.invalid || undefined}
    >
      {data.trigger ? null : <Handle type="target" position={data.vertical ? Position.Top : Position.Left} isConnectable={false} className="!bg-slate-400" />}
      <p className="truncate text-sm font-medium text-slate-900">{data.name ?? data.id}</p>
      <p className="truncate font-mono text-xs text-slate-500">
        {data.type}
        {data.name ? ` · ${data.id}` : ''}
      </p>
      {data.invalid ? <p className="mt-0.5 text-xs font-medium text-red-600">Has a problem</p> : null}
      <Handle type="source" position={data.vertical ? Position.Bottom : Position.Right} isConnectable={false} className="!bg-slate-400" />
    </div>
  );
}

const NODE_TYPES = { step: StepNode };

/**
 * The workflow drawn read-only (@xyflow/react): nodes where their `position` puts them when every
 * node has one, else laid out in layers from the edges; branch outputs other than `main` label
 * their edge; nodes and edges an error names are marked red.
 */
export function WorkflowGraph({
  nodes,
  edges,
  invalidNodes,
  invalidEdges,
  label = 'Workflow graph',
  height = 'h-96',
  direction = 'LR',
}: {
  nodes: readonly unknown[];
  edges: readonly unknown[];
  invalidNodes?: ReadonlySet<string>;
  invalidEdges?: ReadonlySet<string>;
  label?: string;
  height?: string;
  /** Left to right (wide boxes) or top to bottom (tall ones). */
  direction?: 'LR' | 'TB';
}) {
  const graph = useMemo(() => graphOf({ nodes, edges }), [nodes, edges]);
  const positions = useMemo(() => {
    const given = nodes.map((n) => (n && typeof n === 'object' ? (n as { position?: { x?: unknown; y?: unknown } }).position : undefined));
    if (given.length > 0 && given.every((p) => p && typeof p.x === 'number' && typeof p.y === 'number')) {
      return new Map(graph.nodes.map((n, i) => [n.id, given[i] as { x: number; y: number }]));
    }
    return layeredLayout(graph.nodes, graph.edges, { direction });
  }, [graph, nodes, direction]);

  const flowNodes = useMemo<Node<StepData>[]>(
    () =>
      graph.nodes.map((n) => ({
        id: n.id,
        type: 'step',
        position: positions.get(n.id) ?? { x: 0, y: 0 },
        data: {
          id: n.id,
          type: n.type,
          name: n.name,
          invalid: invalidNodes?.has(n.id) ?? false,
          trigger: n.type.startsWith('trigger.'),
          vertical: direction === 'TB',
        },
        draggable: false,
        connectable: false,
        selectable: false,
      })),
    [graph, positions, invalidNodes, direction],
  );

  const flowEdges = useMemo<Edge[]>(
    () =>
      graph.edges.map((e, i) => {
        const invalid = invalidEdges?.has(edgeKey(e.from, e.to)) ?? false;
        const colour = invalid ? '#dc2626' : e.output === 'false' || e.output === 'rejected' ? '#94a3b8' : '#64748b';
        return {
          id: `${e.from}-${e.to}-${e.output}-${i}`,
          source: e.from,
          target: e.to,
          label: e.output === 'main' ? undefined : e.output,
          labelStyle: { fontSize: 11, fill: invalid ? '#dc2626' : '#334155' },
          labelBgStyle: { fill: '#f8fafc' },
          style: { stroke: colour, strokeWidth: invalid ? 2.5 : 1.5, strokeDasharray: invalid ? '6 4' : undefined },
          markerEnd: { type: MarkerType.ArrowClosed, color: colour },
          focusable: false,
        };
      }),
    [graph, invalidEdges],
  );

  return (
    <div role="group" aria-label={label} className={`${height} w-full overflow-hidden rounded-lg bg-slate-50 ring-1 ring-slate-200`}>
      {graph.nodes.length === 0 ? (
        <p className="p-6 text-sm text-slate-500">No nodes to draw.</p>
      ) : (
        <ReactFlow
          key={graph.nodes.map((n) => n.id).join(' ')}
          nodes={flowNodes}
          edges={flowEdges}
          nodeTypes={NODE_TYPES}
          fitView
          fitViewOptions={{ padding: 0.15, maxZoom: 1.1 }}
          minZoom={0.2}
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          nodesFocusable={false}
          edgesFocusable={false}
          zoomOnDoubleClick={false}
        >
          <Background gap={20} color="#e2e8f0" />
          <Controls showInteractive={false} position="top-left" />
        </ReactFlow>
      )}
    </div>
  );
}
