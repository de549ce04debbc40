/**
 * The visual workflow editor: a canvas of steps (canvas.tsx) between the node palette and a side
 * panel for the selected step, with undo and redo, keyboard shortcuts, saving with the API's answer
 * shown on the canvas, a draft kept in this browser until saved, a stale save refused rather than
 * overwriting (409 CONFLICT), runs started from the editor and followed live on the canvas, and
 * export and import as a JSON file. It uses the public API only.
 */
import { useCallback, useEffect, useEffectEvent, useMemo, useReducer, useRef, useState, type ReactNode } from 'react';
import { Link, useNavigate } from '@tanstack/react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { applyEdgeChanges, applyNodeChanges, Panel, useReactFlow, type Connection, type EdgeChange, type NodeChange } from '@xyflow/react';
import { Download, LayoutGrid, Play, Redo2, Save, Undo2, Upload } from 'lucide-react';
import { api, ApiError, unwrap, type Schemas } from '../../api/client';
import { formatDateTime } from '../../lib/format';
import { Button } from '../ui/button';
import { FormError } from '../ui/states';
import type { MergedStep } from '../runs/timeline';
import { isFinalRun } from '../runs/timeline';
import {
  connect, connectionProblem, contentOf, defaultName, LAYOUT, docOf, duplicate, editNode, fileOf, isTrigger, MAIN, metaOf, newNodeId, outputsOf, parseWorkflowFile,
  placeAll, relayout, removeElements, saveBody, savedContent, stepNode, type Doc, type LinkEdge, type NodeTypeInfo, type StepNode, type WorkflowMeta,
} from './canvas-model';
import { DisplayStore, EditorCanvas } from './canvas';
import { problemsOf, type Definition, type Problems } from './definition';
import { clearDraft, draftKey, readDraft, writeDraft, type Draft } from './drafts';
import { EditorRunDialog, useEditorRun, type EditorRun } from './editor-run';
import { ExpressionPreview, type PreviewRun } from './expression-preview';
import { historyReducer, startHistory } from './history';
import { EdgeInspector, NodeInspector, WorkflowSettings, type NodeEdit } from './inspector';
import { Palette } from './palette';

type Workflow = Schemas['Workflow'];

export interface OpenedTemplate {
  id: string;
  name: string;
  description: string;
  nodes: Record<string, unknown>[];
  edges: Record<string, unknown>[];
}

const BLANK_NAME = 'Untitled workflow';

function initialDoc(workflow: Workflow | null, template: OpenedTemplate | null): Doc {
  if (workflow) return docOf(workflow as unknown as Definition, metaOf(workflow));
  if (template) return docOf(template as unknown as Definition, { name: template.name, description: template.description, budgetUsd: '' });
  return docOf({ nodes: [], edges: [] }, { name: BLANK_NAME, description: '', budgetUsd: '' });
}

const draftContent = (draft: Draft) => contentOf({ ...saveBody({ meta: draft.meta, nodes: [], edges: [] }), nodes: draft.nodes, edges: draft.edges });

function inField(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || !el.tagName) return false;
  return el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName);
}

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'workflow';

/** Follows a run and reports it up (the canvas, the run bar and the side panel read it). */
function RunFollower({ orgId, runId, display, onChange }: { orgId: string; runId: string; display: DisplayStore; onChange: (run: EditorRun) => void }) {
  const run = useEditorRun(orgId, runId, display);
  useEffect(() => onChange(run), [run, onChange]);
  return null;
}

function Banner({ tone, children, label }: { tone: 'amber' | 'red' | 'sky' | 'emerald'; children: ReactNode; label?: string }) {
  const tones = { amber: 'bg-amber-50 text-amber-900 ring-amber-200', red: 'bg-red-50 text-red-800 ring-red-200', sky: 'bg-sky-50 text-sky-900 ring-sky-200', emerald: 'bg-emerald-50 text-emerald-800 ring-emerald-200' };
  return <div role={tone === 'red' ? 'alert' : 'status'} aria-label={label} className={`mx-3 mt-2 rounded-md px-3 py-2 text-sm ring-1 ${tones[tone]}`}>{children}</div>;
}

const RUN_WORDS: Record<string, string> = { QUEUED: 'Queued', RUNNING: 'Running…', WAITING: 'Waiting', SUCCEEDED: 'Succeeded', FAILED: 'Failed', CANCELED: 'Canceled' };

export function WorkflowEditor({ orgId, workflow, template, nodeTypes, canWrite }: {
  orgId: string;
  /** The saved workflow, or null for a new one (blank, or from `template`). */
  workflow: Workflow | null;
  template: OpenedTemplate | null;
  nodeTypes: NodeTypeInfo[];
  canWrite: boolean;
}) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const flow = useReactFlow<StepNode, LinkEdge>();
  const types = useMemo(() => new Map(nodeTypes.map((t) => [t.type, t])), [nodeTypes]);
  const display = useMemo(() => new DisplayStore(), []);

  const [base, setBase] = useState<Workflow | null>(workflow);
  const [history, dispatch] = useReducer(historyReducer, null, () => startHistory(initialDoc(workflow, template)));
  const [newContent] = useState(() => (workflow ? null : contentOf(saveBody(initialDoc(null, template)))));
  const doc = history.doc;
  // The latest document for event handlers, so they stay the same functions while a node is dragged
  // (the canvas and the side panel then re-render only what moved).
  const docRef = useRef(doc);
  useEffect(() => {
    docRef.current = doc;
  });
  const key = draftKey(orgId, base?.id ?? null);
  const readOnly = !canWrite;

  // ——— What is unsaved, and the draft in this browser ———
  const current = useMemo(() => contentOf(saveBody(history.stable)), [history.stable]);
  const baseContent = useMemo(() => (base ? savedContent(base) : newContent), [base, newContent]);
  const dirty = current !== baseContent;
  const [offer, setOffer] = useState<Draft | null>(() => {
    const draft = readDraft(draftKey(orgId, workflow?.id ?? null));
    return draft && draftContent(draft) !== (workflow ? savedContent(workflow) : newContent) ? draft : null;
  });
  const [draftSaved, setDraftSaved] = useState<string | null>(null);
  // What the last successful save stored: a draft timer that fires between the save's answer and
  // the re-render (or the move to the new workflow's address) must not keep it as a draft again.
  const lastSaved = useRef<string | null>(null);
  useEffect(() => {
    if (readOnly || offer || history.revision === 0) return;
    const keep = () => {
      if (!dirty || lastSaved.current === current) {
        clearDraft(key);
        setDraftSaved(null);
        return;
      }
      const def = saveBody(history.stable);
      const savedAt = new Date().toISOString();
      if (writeDraft(key, { savedAt, baseVersion: base?.version ?? null, templateId: template?.id, meta: history.stable.meta, nodes: def.nodes, edges: def.edges })) setDraftSaved(savedAt);
    };
    const timer = setTimeout(keep, 250);
    // A reload or a closed tab before the timer fires keeps the last edit too.
    window.addEventListener('pagehide', keep);
    return () => {
      clearTimeout(timer);
      window.removeEventListener('pagehide', keep);
    };
  }, [current, dirty, key, offer, readOnly, history.revision, history.stable, base?.version, template?.id]);

  const restore = () => {
    if (!offer) return;
    const draft = offer;
    setOffer(null);
    dispatch({ kind: 'commit', change: () => docOf({ nodes: draft.nodes, edges: draft.edges }, draft.meta) });
    setTimeout(() => void flow.fitView({ padding: 0.2, maxZoom: 1 }), 50);
  };
  const discard = () => {
    clearDraft(key);
    setOffer(null);
  };

  // ——— Problems the API named ———
  const [problems, setProblems] = useState<Problems | null>(null);
  useEffect(() => {
    display.setProblems(problems?.nodeMessages ?? new Map(), problems?.edgeMessages ?? new Map());
  }, [display, problems]);

  // ——— Editing ———
  const commit = useCallback((change: (d: Doc) => Doc, key?: string) => dispatch({ kind: 'commit', change, key }), []);
  const selectedNodes = useMemo(() => doc.nodes.filter((n) => n.selected), [doc.nodes]);
  const selectedEdges = useMemo(() => doc.edges.filter((e) => e.selected), [doc.edges]);
  const selectedId = selectedNodes.length === 1 ? selectedNodes[0]!.id : null;
  const [notice, setNotice] = useState<string | null>(null);

  const onNodesChange = useCallback((changes: NodeChange<StepNode>[]) => {
    // Keyboard moves (arrow keys on a selected step) are steps of their own; the rest is the canvas's.
    const moves = changes.filter((c) => c.type === 'position' && !c.dragging && c.position);
    const rest = changes.filter((c) => c.type !== 'remove' && !(c.type === 'position' && !c.dragging && c.position));
    if (rest.length) dispatch({ kind: 'transient', change: (d) => ({ ...d, nodes: applyNodeChanges(rest, d.nodes) }) });
    if (moves.length) dispatch({ kind: 'commit', key: 'keyboard-move', change: (d) => ({ ...d, nodes: placeAll(applyNodeChanges(moves, d.nodes)) }) });
  }, []);
  const onEdgesChange = useCallback((changes: EdgeChange<LinkEdge>[]) => {
    const rest = changes.filter((c) => c.type !== 'remove');
    if (rest.length) dispatch({ kind: 'transient', change: (d) => ({ ...d, edges: applyEdgeChanges(rest, d.edges) }) });
  }, []);
  const onDragStart = useCallback(() => dispatch({ kind: 'begin' }), []);
  const onDragStop = useCallback(() => dispatch({ kind: 'end', change: (d) => ({ ...d, nodes: placeAll(d.nodes) }) }), []);

  const isValidConnection = useCallback((c: Connection | LinkEdge) => connectionProblem(docRef.current, c.source, c.sourceHandle ?? MAIN, c.target) === null, []);
  const onConnect = useCallback((c: Connection) => {
    const problem = connectionProblem(docRef.current, c.source, c.sourceHandle ?? MAIN, c.target);
    if (problem) {
      setNotice(problem);
      return;
    }
    setNotice(null);
    commit((d) => ({ ...d, edges: connect(d, c.source, c.sourceHandle ?? MAIN, c.target) }));
  }, [commit, setNotice]);

  const addNode = useCallback((type: string, at?: { x: number; y: number }) => {
    if (readOnly) return;
    const d = docRef.current;
    const id = newNodeId(type, new Set(d.nodes.map((n) => n.id)));
    const anchor = d.nodes.filter((n) => n.selected).length === 1 ? d.nodes.find((n) => n.selected)! : null;
    const siblings = anchor ? d.edges.filter((e) => e.source === anchor.id).length : 0;
    let position = at;
    if (!position && anchor) position = { x: anchor.position.x + siblings * LAYOUT.nodeGap, y: anchor.position.y + LAYOUT.layerGap };
    if (!position) {
      const pane = document.querySelector('.react-flow')?.getBoundingClientRect();
      position = pane ? flow.screenToFlowPosition({ x: pane.left + pane.width / 2 - 112, y: pane.top + pane.height / 3 }) : { x: 0, y: 0 };
      // Not on top of another step.
      while (d.nodes.some((n) => Math.abs(n.position.x - position!.x) < 60 && Math.abs(n.position.y - position!.y) < 40)) position = { x: position.x + 30, y: position.y + 40 };
    }
    const node = stepNode({ id, type, name: defaultName(type) }, position, true, true);
    const outputs = anchor ? outputsOf(anchor.data.def.type, types) : [];
    const link = anchor && outputs.length === 1 && !isTrigger(type) && !at ? outputs[0]! : null;
    commit((doc) => {
      const nodes = [...placeAll(doc.nodes).map((n) => (n.selected ? { ...n, selected: false } : n)), node];
      const edges = doc.edges.map((e) => (e.selected ? { ...e, selected: false } : e));
      const next = { ...doc, nodes, edges };
      return link && anchor ? { ...next, edges: connect(next, anchor.id, link, id) } : next;
    });
    // Keep the new step in sight.
    const pane = document.querySelector('.react-flow')?.getBoundingClientRect();
    const topLeft = flow.flowToScreenPosition(position);
    const bottomRight = flow.flowToScreenPosition({ x: position.x + 224, y: position.y + 80 });
    if (pane && (topLeft.x < pane.left || topLeft.y < pane.top || bottomRight.x > pane.right || bottomRight.y > pane.bottom)) {
      void flow.setCenter(position.x + 112, position.y + 40, { zoom: flow.getZoom(), duration: 200 });
    }
  }, [readOnly, flow, types, commit]);

  const removeSelection = useCallback(() => {
    const d = docRef.current;
    const nodeIds = new Set(d.nodes.filter((n) => n.selected).map((n) => n.id));
    const edgeIds = new Set(d.edges.filter((e) => e.selected).map((e) => e.id));
    if (!nodeIds.size && !edgeIds.size) return;
    commit((doc) => ({ ...doc, ...removeElements(doc, nodeIds, edgeIds) }));
  }, [commit]);

  const duplicateSelection = useCallback(() => {
    const ids = new Set(docRef.current.nodes.filter((n) => n.selected).map((n) => n.id));
    if (!ids.size) return;
    commit((doc) => {
      const { nodes, edges } = duplicate(doc, ids);
      return { ...doc, nodes, edges: edges.map((e) => (e.selected ? { ...e, selected: false } : e)) };
    });
  }, [commit]);

  const editSelected = useCallback((id: string, edit: NodeEdit, field: string) => {
    display.clearNodeProblem(id);
    setProblems((p) => {
      if (!p?.nodeMessages.has(id)) return p;
      const nodeMessages = new Map(p.nodeMessages);
      nodeMessages.delete(id);
      const params = new Map(p.params);
      params.delete(id);
      return { ...p, nodeMessages, params };
    });
    commit((doc) => ({ ...doc, nodes: doc.nodes.map((n) => (n.id === id ? editNode(n, edit) : n)) }), `node:${id}:${field}`);
  }, [commit, display]);

  const editMeta = useCallback((change: Partial<WorkflowMeta>, field: string) => commit((doc) => ({ ...doc, meta: { ...doc.meta, ...change } }), `meta:${field}`), [commit]);

  const tidy = () => {
    commit((d) => ({ ...d, nodes: relayout(d) }));
    setTimeout(() => void flow.fitView({ padding: 0.2, maxZoom: 1, duration: 200 }), 50);
  };

  // ——— Saving ———
  const [conflict, setConflict] = useState<{ mine: number | null } | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: async ({ body, version }: { body: ReturnType<typeof saveBody>; version: number | null }) => {
      if (base) return unwrap(api.PATCH('/api/v1/orgs/{orgId}/workflows/{id}', { params: { path: { orgId, id: base.id } }, body: { ...body, ...(version === null ? {} : { version }) } as never }));
      return unwrap(api.POST('/api/v1/orgs/{orgId}/workflows', { params: { path: { orgId } }, body: { ...body, active: false } as never }));
    },
    onMutate: () => {
      setSaved(null);
      setNotice(null);
    },
    onSuccess: async (workflowSaved, { body }) => {
      lastSaved.current = contentOf(body);
      clearDraft(key);
      setDraftSaved(null);
      setProblems(null);
      setConflict(null);
      queryClient.setQueryData([orgId, 'workflows', 'one', workflowSaved.id], workflowSaved);
      void queryClient.invalidateQueries({ queryKey: [orgId, 'workflows', 'list'] });
      if (!base) {
        clearDraft(draftKey(orgId, null));
        await navigate({ to: '/orgs/$orgId/workflows/$workflowId/edit', params: { orgId, workflowId: workflowSaved.id }, replace: true });
        return;
      }
      setBase(workflowSaved);
      setSaved(new Date().toISOString());
    },
    onError: (error, { body }) => {
      if (error instanceof ApiError && error.status === 409) {
        setConflict({ mine: base?.version ?? null });
        // Losing nothing: the draft is kept whatever the timer was doing.
        const savedAt = new Date().toISOString();
        if (writeDraft(key, { savedAt, baseVersion: base?.version ?? null, meta: history.stable.meta, nodes: body.nodes, edges: body.edges })) setDraftSaved(savedAt);
        return;
      }
      const found = problemsOf(error, { nodes: body.nodes, edges: body.edges });
      setProblems(found);
      const first = found ? [...found.nodeIds][0] : undefined;
      if (first) focusNode(first);
    },
  });
  const nameError = doc.meta.name.trim() === '' ? 'A workflow needs a name' : undefined;
  const budgetBad = doc.meta.budgetUsd.trim() !== '' && !(Number(doc.meta.budgetUsd) >= 0);
  const canSave = canWrite && !save.isPending && !nameError && !budgetBad && (dirty || !base) && doc.nodes.length > 0;
  const doSave = (force = false) => {
    if (!canWrite || save.isPending || nameError || budgetBad) return;
    if (!force && !dirty && base) return;
    save.mutate({ body: saveBody(history.stable), version: base?.version ?? null });
  };

  /** The conflict resolved by taking what is saved now; the draft stays, offered back. */
  const reload = useMutation({
    mutationFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/workflows/{id}', { params: { path: { orgId, id: base!.id } } })),
    onSuccess: (fresh) => {
      queryClient.setQueryData([orgId, 'workflows', 'one', fresh.id], fresh);
      const draft = readDraft(key);
      setConflict(null);
      setProblems(null);
      setBase(fresh);
      setOffer(draft && draftContent(draft) !== savedContent(fresh) ? draft : null);
      dispatch({ kind: 'reset', doc: docOf(fresh as unknown as Definition, metaOf(fresh)) });
      setTimeout(() => void flow.fitView({ padding: 0.2, maxZoom: 1 }), 50);
    },
  });
  /** The conflict resolved by keeping mine: saved over the newer version, knowingly. */
  const overwrite = useMutation({
    mutationFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/workflows/{id}', { params: { path: { orgId, id: base!.id } } })),
    onSuccess: (fresh) => save.mutate({ body: saveBody(history.stable), version: fresh.version }),
  });

  const focusNode = (id: string) => {
    dispatch({ kind: 'transient', change: (d) => ({ ...d, nodes: d.nodes.map((n) => (Boolean(n.selected) === (n.id === id) ? n : { ...n, selected: n.id === id })), edges: d.edges.map((e) => (e.selected ? { ...e, selected: false } : e)) }) });
    setTimeout(() => void flow.fitView({ nodes: [{ id }], maxZoom: 1.1, duration: 250, padding: 0.6 }), 30);
  };

  // ——— Running ———
  const [running, setRunning] = useState(false);
  const [runId, setRunId] = useState<string | null>(null);
  const [run, setRun] = useState<EditorRun | null>(null);
  const [lastInput, setLastInput] = useState('{}');
  const startRun = useMutation({
    mutationFn: async ({ input, testMode }: { input: Record<string, unknown>; testMode: boolean }) => {
      if (dirty && base) {
        const body = saveBody(history.stable);
        await save.mutateAsync({ body, version: base.version });
      }
      return unwrap(api.POST('/api/v1/orgs/{orgId}/workflows/{id}/run', { params: { path: { orgId, id: base!.id } }, body: { input, testMode } }));
    },
    onSuccess: (created, { input }) => {
      setLastInput(JSON.stringify(input, null, 2));
      setRun(null);
      setRunId(created.id);
      setRunning(false);
      void queryClient.invalidateQueries({ queryKey: [orgId, 'runs', 'list'] });
    },
  });
  const onRun = useCallback((r: EditorRun) => setRun(r), []);
  const hideRun = () => {
    setRunId(null);
    setRun(null);
    display.setRun(new Map());
  };
  const latestRun = useQuery({
    queryKey: [orgId, 'runs', 'list', { workflowId: base?.id, pageSize: 1 }],
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/runs', { params: { path: { orgId }, query: { workflowId: base!.id, pageSize: 1 } } })),
    enabled: Boolean(base && !runId),
  });
  const latest = latestRun.data?.items[0];
  const runCreatedAt = run?.createdAt;
  const previewRun = useMemo<PreviewRun | null>(() => (runId
    ? { id: runId, label: runCreatedAt ? `of ${formatDateTime(runCreatedAt)}` : 'shown' }
    : latest ? { id: latest.id, label: `of ${formatDateTime(latest.createdAt)}` } : null), [runId, runCreatedAt, latest]);

  // ——— Import, export ———
  const fileInput = useRef<HTMLInputElement>(null);
  const [importError, setImportError] = useState<string | null>(null);
  const importFile = async (file: File) => {
    const parsed = parseWorkflowFile(await file.text());
    if (!parsed.ok) {
      setImportError(parsed.error);
      return;
    }
    setImportError(null);
    const value = parsed.value;
    commit((d) => docOf({ nodes: value.nodes, edges: value.edges }, {
      name: value.name ?? d.meta.name,
      description: value.description ?? d.meta.description,
      budgetUsd: value.budgetUsd === null || value.budgetUsd === undefined ? d.meta.budgetUsd : String(value.budgetUsd),
    }));
    setNotice(`Imported ${value.nodes.length} ${value.nodes.length === 1 ? 'step' : 'steps'} from ${file.name}: save to keep them (undo to go back).`);
    setTimeout(() => void flow.fitView({ padding: 0.2, maxZoom: 1 }), 50);
  };
  const exportFile = () => download(`${slug(doc.meta.name)}.workflow.json`, `${JSON.stringify(fileOf(history.stable), null, 2)}\n`);

  // ——— Keyboard ———
  const onKey = useEffectEvent((event: KeyboardEvent) => {
    if (document.querySelector('[role="dialog"]')) return;
    const mod = event.ctrlKey || event.metaKey;
    const key = event.key.toLowerCase();
    const typing = inField(event.target);
    if (mod && key === 's') {
      event.preventDefault();
      doSave();
      return;
    }
    if (readOnly) return;
    if (mod && key === 'd') {
      event.preventDefault();
      if (!typing) duplicateSelection();
      return;
    }
    if (typing) return;
    if (mod && (key === 'y' || (key === 'z' && event.shiftKey))) {
      event.preventDefault();
      dispatch({ kind: 'redo' });
    } else if (mod && key === 'z') {
      event.preventDefault();
      dispatch({ kind: 'undo' });
    } else if (!mod && (event.key === 'Delete' || event.key === 'Backspace')) {
      event.preventDefault();
      removeSelection();
    }
  });
  useEffect(() => {
    const listener = (event: KeyboardEvent) => onKey(event);
    window.addEventListener('keydown', listener);
    return () => window.removeEventListener('keydown', listener);
  }, []);

  // ——— The side panel ———
  const nodesById = useMemo(() => new Map(doc.nodes.map((n) => [n.id, n])), [doc.nodes]);
  const selected = selectedNodes.length === 1 ? selectedNodes[0]! : null;
  const selectedEdge = !selected && selectedNodes.length === 0 && selectedEdges.length === 1 ? selectedEdges[0]! : null;
  const preview = useCallback((nodeId: string) => ({
    preview: (expression: string, param: string) => <ExpressionPreview orgId={orgId} workflowId={base?.id ?? null} nodeId={nodeId} run={previewRun} expression={expression} param={param} />,
  }), [orgId, base?.id, previewRun]);
  const selectedContext = useMemo(() => (selectedId ? preview(selectedId) : {}), [preview, selectedId]);
  const selectedProblem = useMemo(() => {
    const message = selectedId ? problems?.nodeMessages.get(selectedId) : undefined;
    return message ? { message, param: problems!.params.get(selectedId!) } : undefined;
  }, [problems, selectedId]);
  const onEditSelected = useCallback((edit: NodeEdit, field: string) => {
    if (selectedId) editSelected(selectedId, edit, field);
  }, [selectedId, editSelected]);

  const runStep: MergedStep | undefined = selected && run ? run.steps.get(selected.id) : undefined;
  const runFinal = isFinalRun(run?.status);
  const status = save.isPending ? 'Saving…' : conflict ? 'Not saved' : dirty || !base ? (draftSaved ? `Unsaved changes · draft kept ${formatDateTime(draftSaved)}` : base ? 'Unsaved changes' : 'Not saved yet') : saved ? 'All changes saved' : `Saved · version ${base.version}`;

  return (
    <div className="-m-6 flex h-[calc(100vh-3.5rem)] min-h-[560px] flex-col bg-white">
      {runId ? <RunFollower orgId={orgId} runId={runId} display={display} onChange={onRun} /> : null}
      <header className="flex flex-wrap items-center gap-2 border-b border-slate-200 px-3 py-2">
        <Link to={base ? '/orgs/$orgId/workflows/$workflowId' : '/orgs/$orgId/workflows'} params={{ orgId, workflowId: base?.id ?? '' }} className="rounded px-2 py-1 text-sm text-indigo-700 hover:bg-indigo-50">←<span className="sr-only"> Back</span></Link>
        <div className="min-w-48 flex-1">
          <input
            aria-label="Workflow name"
            value={doc.meta.name}
            maxLength={200}
            readOnly={readOnly}
            aria-invalid={nameError ? true : undefined}
            onChange={(e) => editMeta({ name: e.target.value }, 'name')}
            className="w-full max-w-md rounded-md border-0 px-2 py-1 text-lg font-semibold text-slate-900 ring-1 ring-transparent hover:ring-slate-200 focus:ring-2 focus:ring-indigo-600 aria-[invalid=true]:ring-red-500"
          />
          <p role="status" aria-label="Save status" className="px-2 text-xs text-slate-500">{status}</p>
        </div>
        {canWrite ? (
          <div className="flex flex-wrap items-center gap-1.5">
            <Button size="sm" variant="ghost" onClick={() => dispatch({ kind: 'undo' })} disabled={!history.past.length} aria-label="Undo" title="Undo (Ctrl+Z)"><Undo2 className="size-4" /></Button>
            <Button size="sm" variant="ghost" onClick={() => dispatch({ kind: 'redo' })} disabled={!history.future.length} aria-label="Redo" title="Redo (Ctrl+Shift+Z)"><Redo2 className="size-4" /></Button>
            <Button size="sm" variant="ghost" onClick={tidy} disabled={!doc.nodes.length} title="Lay the steps out again from their edges"><LayoutGrid className="size-4" />Tidy up</Button>
            <span aria-hidden="true" className="mx-1 h-5 w-px bg-slate-200" />
            <Link to="/orgs/$orgId/workflows/templates" params={{ orgId }} className="rounded-md px-2.5 py-1 text-xs font-medium text-slate-700 hover:bg-slate-100">Templates</Link>
            <Button size="sm" variant="ghost" onClick={() => fileInput.current?.click()}><Upload className="size-4" />Import</Button>
            <input ref={fileInput} type="file" accept="application/json,.json" className="hidden" aria-label="Import a workflow file" onChange={(e) => {
              const file = e.target.files?.[0];
              e.target.value = '';
              if (file) void importFile(file);
            }} />
            <Button size="sm" variant="ghost" onClick={exportFile} disabled={!doc.nodes.length}><Download className="size-4" />Export</Button>
            <span aria-hidden="true" className="mx-1 h-5 w-px bg-slate-200" />
            <Button size="sm" onClick={() => setRunning(true)} disabled={!base} title={base ? 'Run the workflow and follow it here' : 'Save the workflow first'}><Play className="size-4" />Run</Button>
            <Button size="sm" variant="primary" onClick={() => doSave()} disabled={!canSave} title="Save (Ctrl+S)"><Save className="size-4" />Save</Button>
          </div>
        ) : <span className="text-xs text-slate-500">Read only: your role cannot change workflows.</span>}
      </header>

      {offer ? (
        <Banner tone="sky" label="Unsaved draft">
          <span>Unsaved changes to this workflow from {formatDateTime(offer.savedAt)} are kept in this browser{offer.baseVersion !== null && base && offer.baseVersion !== base.version ? ` (made on version ${offer.baseVersion}; the saved workflow is now version ${base.version})` : ''}.</span>{' '}
          <Button size="sm" variant="primary" className="ml-2" onClick={restore}>Restore draft</Button>{' '}
          <Button size="sm" onClick={discard}>Discard draft</Button>
        </Banner>
      ) : null}
      {conflict ? (
        <Banner tone="red" label="Save conflict">
          <p className="font-semibold">Not saved: this workflow was changed elsewhere since you opened it{base ? ` (you have version ${base.version})` : ''}.</p>
          <p className="mt-0.5">Your changes are not lost: they are kept as a draft in this browser. Load the saved version to see what changed (your draft is offered back), or save yours over it.</p>
          <div className="mt-2 flex gap-2">
            <Button size="sm" variant="primary" onClick={() => reload.mutate()} disabled={reload.isPending}>Load the saved version</Button>
            <Button size="sm" variant="danger" onClick={() => overwrite.mutate()} disabled={overwrite.isPending || save.isPending}>Save mine over it</Button>
          </div>
          <FormError error={reload.error ?? overwrite.error} />
        </Banner>
      ) : null}
      {problems ? (
        <Banner tone="red" label="Problems">
          <p className="font-semibold">{save.error instanceof ApiError && save.error.code === 'WORKFLOW_INVALID' ? 'Not saved: the workflow is not valid' : 'Not saved'}</p>
          <p className="mt-0.5">{problems.message}</p>
          {problems.nodeIds.size ? (
            <p className="mt-1 flex flex-wrap gap-1.5">
              {[...problems.nodeIds].map((id) => <Button key={id} size="sm" onClick={() => focusNode(id)}>Show {nodesById.get(id)?.data.def.name ?? id}</Button>)}
            </p>
          ) : null}
        </Banner>
      ) : save.error && !conflict ? <div className="mx-3 mt-2"><FormError error={save.error} /></div> : null}
      {importError ? <Banner tone="red" label="Import">{importError}</Banner> : null}
      {notice ? <Banner tone="amber" label="Notice"><span>{notice}</span> <button type="button" className="ml-2 underline" onClick={() => setNotice(null)}>Dismiss</button></Banner> : null}

      <div className="mt-2 flex min-h-0 flex-1 border-t border-slate-200">
        <div className="w-56 shrink-0 border-r border-slate-200 bg-slate-50">
          <Palette types={nodeTypes} onAdd={addNode} disabled={readOnly} />
        </div>
        <div role="group" aria-label="Workflow canvas" className="relative min-w-0 flex-1 bg-slate-50">
          <EditorCanvas
            nodes={doc.nodes}
            edges={doc.edges}
            types={types}
            display={display}
            readOnly={readOnly}
            onNodesChange={onNodesChange}
            onEdgesChange={onEdgesChange}
            onConnect={onConnect}
            isValidConnection={isValidConnection}
            onDragStart={onDragStart}
            onDragStop={onDragStop}
            onDropType={(type, at) => addNode(type, at)}
          >
            {doc.nodes.length === 0 ? (
              <Panel position="top-center" className="mt-24 rounded-lg bg-white p-4 text-center text-sm text-slate-600 shadow ring-1 ring-slate-200">
                <p className="font-medium text-slate-800">An empty workflow</p>
                <p className="mt-1">Start with a trigger from the palette (Manual trigger, Event, Schedule or Webhook),<br />then add steps and connect their outputs to inputs.</p>
                <p className="mt-2"><Link to="/orgs/$orgId/workflows/templates" params={{ orgId }} className="font-medium text-indigo-700 underline">Or start from a template</Link></p>
              </Panel>
            ) : null}
            {runId ? (
              <Panel position="top-center" className="rounded-full bg-white px-4 py-1.5 text-sm whitespace-nowrap shadow ring-1 ring-slate-200">
                <span className="inline-flex items-center gap-2">
                  <span className={`size-2 rounded-full ${run?.status === 'SUCCEEDED' ? 'bg-emerald-500' : run?.status === 'FAILED' ? 'bg-red-500' : runFinal ? 'bg-slate-400' : 'animate-pulse bg-sky-500'}`} aria-hidden="true" />
                  <span>{run?.testMode ? 'Test run' : 'Run'}:</span>
                  <span role="status" aria-label="Run status" className="font-medium">{RUN_WORDS[run?.status ?? 'QUEUED'] ?? run?.status}</span>
                  <Link to="/orgs/$orgId/runs/$runId" params={{ orgId, runId }} className="text-indigo-700 underline">Run page</Link>
                  <button type="button" className="text-slate-500 underline" onClick={hideRun}>Hide</button>
                </span>
              </Panel>
            ) : null}
          </EditorCanvas>
        </div>
        <aside aria-label="Side panel" className="w-80 shrink-0 overflow-y-auto border-l border-slate-200 bg-white">
          {selected ? (
            <NodeInspector
              key={selected.id}
              def={selected.data.def}
              type={types.get(selected.data.def.type)}
              readOnly={readOnly}
              formContext={selectedContext}
              problem={selectedProblem}
              runStep={runStep}
              showRun={Boolean(runId)}
              onEdit={onEditSelected}
              onDelete={removeSelection}
              onDuplicate={duplicateSelection}
            />
          ) : selectedEdge ? (
            <EdgeInspector edge={selectedEdge} nodes={nodesById} readOnly={readOnly} onDelete={removeSelection} />
          ) : selectedNodes.length > 1 ? (
            <div className="space-y-3 p-4 text-sm text-slate-700">
              <p><strong>{selectedNodes.length} steps</strong> selected.</p>
              {readOnly ? null : <div className="flex gap-2"><Button size="sm" onClick={duplicateSelection}>Duplicate</Button><Button size="sm" variant="danger" onClick={removeSelection}>Delete</Button></div>}
            </div>
          ) : (
            <WorkflowSettings meta={doc.meta} readOnly={readOnly} onChange={editMeta} runShown={Boolean(runId)} />
          )}
        </aside>
      </div>

      {canWrite && base ? (
        <EditorRunDialog
          key={running ? 'open' : 'closed'}
          open={running}
          onOpenChange={(open) => { setRunning(open); if (!open) startRun.reset(); }}
          dirty={dirty}
          pending={startRun.isPending}
          error={startRun.error}
          lastInput={lastInput}
          onStart={(input, testMode) => startRun.mutate({ input, testMode })}
        />
      ) : null}
    </div>
  );
}
