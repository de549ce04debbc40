/**
 * The editor's canvas (@xyflow/react): steps with an input on the left and one handle per output on
 * the right (named branches such as `true`/`false` each have theirs), edges labelled by branch, a
 * minimap, zoom controls and a dotted background. What changes often and is not the document — the
 * live status of a run, the API's problems — comes from a small store each node and edge subscribes
 * to on its own, so a run event repaints one node, not the whole canvas.
 */
import { createContext, memo, useContext, useSyncExternalStore, type DragEvent, type ReactNode } from 'react';
import {
  Background,
  BaseEdge,
  Controls,
  EdgeLabelRenderer,
  getBezierPath,
  Handle,
  MiniMap,
  Position,
  ReactFlow,
  useReactFlow,
  type Connection,
  type EdgeChange,
  type EdgeProps,
  type NodeChange,
  type NodeProps,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { Bot, Database, FileText, GitBranch, Megaphone, MessageSquare, Users, Wrench, Zap, type LucideIcon } from 'lucide-react';
import { categoryOf, isTrigger, MAIN, TARGET_HANDLE, type LinkEdge, type NodeTypeInfo, type StepNode } from './canvas-model';
import { edgeKey } from './definition';

// ——— What the canvas shows besides the document ———

export type RunState = 'RUNNING' | 'WAITING' | 'SUCCEEDED' | 'FAILED' | 'RETRYING' | 'SKIPPED' | 'CANCELED';

export interface NodeDisplay {
  status?: RunState;
  itemCount?: number;
  /** What the API said is wrong with this node. */
  problem?: string;
}

const NOTHING: NodeDisplay = {};

/** Run statuses and problems by node (and problems by edge `from→to`), with a subscription per reader. */
export class DisplayStore {
  private run = new Map<string, { status: RunState; itemCount?: number }>();
  private nodeProblems = new Map<string, string>();
  private edgeProblems = new Map<string, string>();
  private shown = new Map<string, NodeDisplay>();
  private listeners = new Set<() => void>();

  subscribe = (listener: () => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  node = (id: string): NodeDisplay => this.shown.get(id) ?? NOTHING;
  edgeProblem = (from: string, to: string): string | undefined => this.edgeProblems.get(edgeKey(from, to));
  status = (id: string) => this.run.get(id)?.status;

  private refresh(ids: Iterable<string>) {
    for (const id of ids) {
      const run = this.run.get(id);
      const problem = this.nodeProblems.get(id);
      const before = this.shown.get(id);
      if (!run && !problem) {
        this.shown.delete(id);
        continue;
      }
      if (before && before.status === run?.status && before.itemCount === run?.itemCount && before.problem === problem) continue;
      this.shown.set(id, { status: run?.status, itemCount: run?.itemCount, problem });
    }
    for (const listener of this.listeners) listener();
  }

  setRun(steps: ReadonlyMap<string, { status: RunState; itemCount?: number }>) {
    const ids = new Set([...this.run.keys(), ...steps.keys()]);
    this.run = new Map(steps);
    this.refresh(ids);
  }

  setProblems(nodes: ReadonlyMap<string, string>, edges: ReadonlyMap<string, string>) {
    const ids = new Set([...this.nodeProblems.keys(), ...nodes.keys()]);
    this.nodeProblems = new Map(nodes);
    this.edgeProblems = new Map(edges);
    this.refresh(ids);
  }

  /** A node was edited: its problem is the author's to re-check on the next save. */
  clearNodeProblem(id: string) {
    if (!this.nodeProblems.has(id)) return;
    this.nodeProblems.delete(id);
    this.refresh([id]);
  }
}

const DisplayContext = createContext<DisplayStore | null>(null);
const TypesContext = createContext<ReadonlyMap<string, NodeTypeInfo>>(new Map());

function useNodeDisplay(id: string): NodeDisplay {
  const store = useContext(DisplayContext);
  return useSyncExternalStore(store?.subscribe ?? noSubscribe, () => store?.node(id) ?? NOTHING);
}

function useEdgeProblem(from: string, to: string): string | undefined {
  const store = useContext(DisplayContext);
  return useSyncExternalStore(store?.subscribe ?? noSubscribe, () => store?.edgeProblem(from, to));
}

const noSubscribe = () => () => undefined;

// ——— Looks ———

export const CATEGORY_LOOK: Record<string, { icon: LucideIcon; tone: string; fill: string; minimap: string }> = {
  trigger: { icon: Zap, tone: 'text-violet-700 bg-violet-100', fill: 'border-t-violet-500', minimap: '#8b5cf6' },
  flow: { icon: GitBranch, tone: 'text-amber-700 bg-amber-100', fill: 'border-t-amber-500', minimap: '#f59e0b' },
  data: { icon: Database, tone: 'text-slate-700 bg-slate-100', fill: 'border-t-slate-400', minimap: '#94a3b8' },
  leads: { icon: Users, tone: 'text-emerald-700 bg-emerald-100', fill: 'border-t-emerald-500', minimap: '#10b981' },
  ai: { icon: Bot, tone: 'text-indigo-700 bg-indigo-100', fill: 'border-t-indigo-500', minimap: '#6366f1' },
  content: { icon: FileText, tone: 'text-sky-700 bg-sky-100', fill: 'border-t-sky-500', minimap: '#0ea5e9' },
  messaging: { icon: MessageSquare, tone: 'text-teal-700 bg-teal-100', fill: 'border-t-teal-500', minimap: '#14b8a6' },
  campaigns: { icon: Megaphone, tone: 'text-pink-700 bg-pink-100', fill: 'border-t-pink-500', minimap: '#ec4899' },
  utility: { icon: Wrench, tone: 'text-slate-700 bg-slate-100', fill: 'border-t-slate-500', minimap: '#64748b' },
};
const DEFAULT_LOOK = CATEGORY_LOOK.utility!;

export const lookOf = (type: string) => CATEGORY_LOOK[categoryOf(type)] ?? DEFAULT_LOOK;

const STATUS_LOOK: Record<RunState, { label: string; card: string; chip: string }> = {
  RUNNING: { label: 'Running', card: 'ring-2 ring-sky-400', chip: 'bg-sky-100 text-sky-800 animate-pulse' },
  WAITING: { label: 'Waiting', card: 'ring-2 ring-amber-400', chip: 'bg-amber-100 text-amber-900' },
  RETRYING: { label: 'Retrying', card: 'ring-2 ring-amber-400', chip: 'bg-amber-100 text-amber-900' },
  SUCCEEDED: { label: 'Succeeded', card: 'ring-2 ring-emerald-500 bg-emerald-50', chip: 'bg-emerald-100 text-emerald-800' },
  FAILED: { label: 'Failed', card: 'ring-2 ring-red-500 bg-red-50', chip: 'bg-red-100 text-red-800' },
  SKIPPED: { label: 'Skipped', card: 'opacity-60 border-dashed', chip: 'bg-slate-100 text-slate-600' },
  CANCELED: { label: 'Canceled', card: 'opacity-70', chip: 'bg-slate-100 text-slate-600' },
};

export const statusLabel = (status: RunState) => STATUS_LOOK[status].label;

// ——— A step ———

function StepNodeView({ id, data, selected }: NodeProps<StepNode>) {
  const types = useContext(TypesContext);
  const display = useNodeDisplay(id);
  const { def } = data;
  const look = lookOf(def.type);
  const Icon = look.icon;
  const known = types.get(def.type);
  const outputs = known?.outputs ?? [MAIN];
  const branched = outputs.length > 1 || outputs[0] !== MAIN;
  const status = display.status ? STATUS_LOOK[display.status] : null;
  const invalid = Boolean(display.problem);
  const ring = invalid ? 'ring-2 ring-red-500' : status ? status.card : selected ? 'ring-2 ring-indigo-500' : '';
  return (
    <div
      className={`relative w-56 rounded-lg border border-t-4 border-slate-200 bg-white text-left shadow-sm ${look.fill} ${ring} ${selected && (status || invalid) ? 'outline-2 outline-offset-2 outline-indigo-500' : ''}`}
      data-status={display.status?.toLowerCase()}
      data-invalid={invalid || undefined}
    >
      {isTrigger(def.type) ? null : (
        <Handle type="target" id={TARGET_HANDLE} position={Position.Top} className="!size-3 !border-2 !border-white !bg-slate-500" />
      )}
      <div className="flex items-start gap-2 px-3 py-2">
        <span aria-hidden="true" className={`mt-0.5 flex size-7 shrink-0 items-center justify-center rounded-md ${look.tone}`}>
          <Icon className="size-4" />
        </span>
        <div className="min-w-0 flex-1">
          <p className="truncate text-sm font-medium text-slate-900">{def.name || def.id}</p>
          <p className="truncate font-mono text-[11px] text-slate-500">
            {def.type}
            {known ? '' : ' (unknown type)'}
          </p>
        </div>
      </div>
      {status || display.problem ? (
        <div className="space-y-1 px-3 pb-2">
          {status ? (
            <span className={`inline-flex items-center rounded px-1.5 py-0.5 text-[11px] font-medium ${status.chip}`}>
              {status.label}
              {display.itemCount !== undefined && display.status === 'SUCCEEDED' ? ` · ${display.itemCount} ${display.itemCount === 1 ? 'item' : 'items'}` : ''}
            </span>
          ) : null}
          {display.problem ? <p className="line-clamp-3 text-[11px] leading-snug text-red-700">{display.problem}</p> : null}
        </div>
      ) : null}
      {branched ? (
        <div className="flex border-t border-slate-100">
          {outputs.map((output) => (
            <div key={output} className="relative flex h-6 flex-1 items-center justify-center text-[11px] font-medium text-slate-600">
              {output}
              <Handle
                type="source"
                id={output}
                position={Position.Bottom}
                className={`!size-3 !border-2 !border-white ${output === 'false' || output === 'rejected' ? '!bg-slate-400' : '!bg-indigo-500'}`}
              />
            </div>
          ))}
        </div>
      ) : (
        <Handle type="source" id={MAIN} position={Position.Bottom} className="!size-3 !border-2 !border-white !bg-indigo-500" />
      )}
    </div>
  );
}

// ——— An edge ———

function LinkEdgeView({
  id,
  source,
  target,
  sourceX,
  sourceY,
  targetX,
  targetY,
  sourcePosition,
  targetPosition,
  sourceHandleId,
  selected,
  markerEnd,
}: EdgeProps<LinkEdge>) {
  const problem = useEdgeProblem(source, target);
  const [path, labelX, labelY] = getBezierPath({ sourceX, sourceY, sourcePosition, targetX, targetY, targetPosition });
  const output = sourceHandleId ?? MAIN;
  const colour = problem ? '#dc2626' : selected ? '#4f46e5' : output === 'false' || output === 'rejected' ? '#94a3b8' : '#64748b';
  // Branches are named on the step's own handles; an edge is labelled only with what is wrong with it.
  const label = problem ? `${output === MAIN ? '' : `${output}: `}${problem}` : null;
  return (
    <>
      <BaseEdge
        id={id}
        path={path}
        markerEnd={markerEnd}
        style={{ stroke: colour, strokeWidth: problem || selected ? 2.5 : 1.5, strokeDasharray: problem ? '6 4' : undefined }}
      />
      {label ? (
        <EdgeLabelRenderer>
          <div
            className={`nodrag nopan pointer-events-none absolute max-w-56 rounded px-1.5 py-0.5 text-[11px] font-medium ${problem ? 'bg-red-50 text-red-700 ring-1 ring-red-300' : 'bg-white text-slate-600 ring-1 ring-slate-200'}`}
            style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)` }}
          >
            {label}
          </div>
        </EdgeLabelRenderer>
      ) : null}
    </>
  );
}

const NODE_TYPES = { step: memo(StepNodeView) };
const EDGE_TYPES = { link: memo(LinkEdgeView) };
const DEFAULT_EDGE = { type: 'link', markerEnd: { type: 'arrowclosed' as const, color: '#64748b' } };

export const PALETTE_DRAG_TYPE = 'application/x-workflow-node-type';

/** The canvas: the document drawn, and what the author does on it reported back. */
export function EditorCanvas({
  nodes,
  edges,
  types,
  display,
  readOnly,
  onNodesChange,
  onEdgesChange,
  onConnect,
  isValidConnection,
  onDragStart,
  onDragStop,
  onDropType,
  children,
}: {
  nodes: StepNode[];
  edges: LinkEdge[];
  types: ReadonlyMap<string, NodeTypeInfo>;
  display: DisplayStore;
  readOnly?: boolean;
  onNodesChange: (changes: NodeChange<StepNode>[]) => void;
  onEdgesChange: (changes: EdgeChange<LinkEdge>[]) => void;
  onConnect: (connection: Connection) => void;
  isValidConnection: (connection: Connection | LinkEdge) => boolean;
  onDragStart: () => void;
  onDragStop: () => void;
  onDropType: (type: string, at: { x: number; y: number }) => void;
  children?: ReactNode;
}) {
  const flow = useReactFlow<StepNode, LinkEdge>();
  const drop = (event: DragEvent) => {
    const type = event.dataTransfer.getData(PALETTE_DRAG_TYPE);
    if (!type || readOnly) return;
    event.preventDefault();
    onDropType(type, flow.screenToFlowPosition({ x: event.clientX, y: event.clientY }));
  };
  return (
    <DisplayContext.Provider value={display}>
      <TypesContext.Provider value={types}>
        <ReactFlow<StepNode, LinkEdge>
          nodes={nodes}
          edges={edges}
          nodeTypes={NODE_TYPES}
          edgeTypes={EDGE_TYPES}
          defaultEdgeOptions={DEFAULT_EDGE}
          onNodesChange={onNodesChange}
          onEdgesChange={onEdgesChange}
          onConnect={onConnect}
          isValidConnection={isValidConnection}
          onNodeDragStart={onDragStart}
          onNodeDragStop={onDragStop}
          onSelectionDragStart={onDragStart}
          onSelectionDragStop={onDragStop}
          onDragOver={(event) => {
            if (event.dataTransfer.types.includes(PALETTE_DRAG_TYPE)) {
              event.preventDefault();
              event.dataTransfer.dropEffect = 'copy';
            }
          }}
          onDrop={drop}
          nodesDraggable={!readOnly}
          nodesConnectable={!readOnly}
          // Deleting goes through the editor (one undo step, and not while typing in a field).
          deleteKeyCode={null}
          multiSelectionKeyCode={['Shift', 'Meta', 'Control']}
          fitView
          fitViewOptions={{ padding: 0.1, maxZoom: 1 }}
          minZoom={0.1}
          maxZoom={2}
          zoomOnDoubleClick={false}
          proOptions={{ hideAttribution: true }}
          ariaLabelConfig={{ 'node.a11yDescription.default': 'Press Enter or Space to select a step; Delete removes it; Ctrl+D duplicates it.' }}
        >
          <Background gap={20} color="#cbd5e1" />
          <Controls showInteractive={false} position="bottom-left" aria-label="Zoom" />
          <MiniMap
            pannable
            zoomable
            ariaLabel="Minimap"
            position="bottom-right"
            nodeColor={(node) => {
              const status = display.status(node.id);
              if (status === 'SUCCEEDED') return '#10b981';
              if (status === 'FAILED') return '#ef4444';
              if (status === 'RUNNING' || status === 'WAITING' || status === 'RETRYING') return '#f59e0b';
              return lookOf((node as StepNode).data.def.type).minimap;
            }}
            nodeStrokeWidth={2}
            className="!rounded-md !ring-1 !ring-slate-200"
            style={{ width: 160, height: 110 }}
          />
          {children}
        </ReactFlow>
      </TypesContext.Provider>
    </DisplayContext.Provider>
  );
}
