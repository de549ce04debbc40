import { useDeferredValue, useMemo, useState } from 'react';
import { ApiError, type Schemas } from '../../api/client';
import { useUpdateWorkflow } from '../../queries/workflows';
import { Button } from '../ui/button';
import { TextArea, TextField } from '../ui/field';
import { FormError } from '../ui/states';
import { definitionText, parseDefinition, problemsOf, type Definition } from './definition';
import { WorkflowGraph } from './workflow-graph';

type Workflow = Schemas['Workflow'];

interface Draft {
  name: string;
  description: string;
  budget: string;
  text: string;
  /** What the editor showed of the workflow when the draft started (to tell a change made elsewhere). */
  base: string;
}

function draftOf(workflow: Workflow): Draft {
  const fields = {
    name: workflow.name,
    description: workflow.description ?? '',
    budget: workflow.budgetUsd === null ? '' : String(workflow.budgetUsd),
    text: definitionText(workflow),
  };
  return { ...fields, base: JSON.stringify(fields) };
}

/**
 * The workflow's settings and definition, edited as JSON, with the graph drawn from what is typed
 * (when it reads as JSON) and the API's validation answer shown in words and marked on the graph.
 * Untouched, it follows the workflow as it changes; once edited, the draft is kept until saved or
 * discarded, and a change made elsewhere meanwhile is pointed out.
 */
export function DefinitionEditor({ orgId, workflow, canWrite }: { orgId: string; workflow: Workflow; canWrite: boolean }) {
  const [draft, setDraft] = useState<Draft | null>(null);
  const [saved, setSaved] = useState(false);
  const [sent, setSent] = useState<Definition | undefined>(undefined);
  const stored = useMemo(() => draftOf(workflow), [workflow]);
  const current = draft ?? stored;
  const deferredText = useDeferredValue(current.text);
  const parsed = useMemo(() => parseDefinition(deferredText), [deferredText]);
  const liveParsed = useMemo(() => parseDefinition(current.text), [current.text]);

  const save = useUpdateWorkflow(orgId, workflow.id, () => {
    setDraft(null);
    setSaved(true);
  });

  const edit = (change: Partial<Draft>) => {
    setSaved(false);
    setDraft({ ...current, ...change });
  };

  const budgetError = current.budget.trim() !== '' && !(Number(current.budget) >= 0) ? 'A number of US dollars, 0 or more (empty: no budget)' : undefined;
  const submit = () => {
    if (!liveParsed.ok || budgetError || !current.name.trim()) return;
    setSent(liveParsed.value);
    // With the version shown: a change made elsewhere meanwhile is refused (409), not overwritten.
    save.mutate({
      body: {
        name: current.name.trim(),
        description: current.description.trim() || null,
        budgetUsd: current.budget.trim() === '' ? null : Number(current.budget),
        nodes: liveParsed.value.nodes,
        edges: liveParsed.value.edges,
      },
      version: workflow.version,
    });
  };

  const problems = problemsOf(save.error, sent);
  const graph = parsed.ok ? parsed.value : workflow;
  // Activating or deactivating changes nothing the editor shows: only a change of these fields counts.
  const changedElsewhere = draft !== null && draft.base !== stored.base;

  return (
    <form
      className="space-y-4"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <div className="grid gap-3 md:grid-cols-3">
        <TextField label="Name" required maxLength={200} value={current.name} disabled={!canWrite} onChange={(e) => edit({ name: e.target.value })} />
        <TextField
          label="Description"
          maxLength={4000}
          value={current.description}
          disabled={!canWrite}
          onChange={(e) => edit({ description: e.target.value })}
        />
        <TextField
          label="Budget (USD per run)"
          inputMode="decimal"
          value={current.budget}
          disabled={!canWrite}
          error={budgetError}
          hint="Empty: no budget of its own"
          onChange={(e) => edit({ budget: e.target.value })}
        />
      </div>
      <div className="grid gap-4 lg:grid-cols-2">
        <TextArea
          label="Definition (JSON)"
          rows={22}
          spellCheck={false}
          value={current.text}
          readOnly={!canWrite}
          onChange={(e) => edit({ text: e.target.value })}
          error={liveParsed.ok ? undefined : liveParsed.error}
          hint={
            <>
              Nodes <code>{'{ id, type, name?, params?, retry?: { maxAttempts, backoffSeconds } }'}</code>, edges <code>{'{ from, to, output? }'}</code>; params
              may hold <code>{'{{ … }}'}</code> JSONata expressions.
            </>
          }
          className="block w-full rounded-md border-0 px-3 py-2 font-mono text-xs leading-5 text-slate-900 ring-1 ring-inset ring-slate-300 focus:ring-2 focus:ring-indigo-600 aria-[invalid=true]:ring-red-500"
        />
        <div className="space-y-3">
          <section aria-label="Graph">
            <p className="mb-1 block text-sm font-medium text-slate-700">Graph</p>
            <WorkflowGraph
              nodes={graph.nodes}
              edges={graph.edges}
              invalidNodes={problems?.nodeIds}
              invalidEdges={problems?.edges}
              height="h-[28rem]"
              direction="TB"
            />
            {!parsed.ok ? <p className="mt-1 text-xs text-slate-500">The graph shows the saved definition until the text reads as JSON again.</p> : null}
          </section>
          {problems ? (
            <div role="alert" className="rounded-md border border-red-200 bg-red-50 p-3 text-sm text-red-800">
              <p className="font-semibold">
                {save.error instanceof ApiError && save.error.code === 'WORKFLOW_INVALID' ? 'The workflow is not valid' : 'Not saved'}
              </p>
              <p className="mt-1">{problems.message}</p>
              {problems.lines.length ? (
                <ul className="mt-1 list-disc pl-5">
                  {problems.lines.map((line) => (
                    <li key={line}>{line}</li>
                  ))}
                </ul>
              ) : null}
            </div>
          ) : (
            <FormError error={save.error instanceof ApiError && save.error.status === 409 ? null : save.error} />
          )}
          {changedElsewhere ? (
            <p role="status" className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">
              This workflow was changed elsewhere since you started editing; saving replaces that change.
            </p>
          ) : null}
          {save.error instanceof ApiError && save.error.status === 409 ? (
            <p role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800">
              Not saved: this workflow was changed elsewhere meanwhile. Your text is still here; reload the page to see the other change, then apply yours
              again.
            </p>
          ) : null}
        </div>
      </div>
      {canWrite ? (
        <div className="flex items-center justify-end gap-3">
          {saved && !draft ? (
            <span role="status" className="text-sm text-emerald-700">
              Saved
            </span>
          ) : null}
          {draft ? <span className="text-sm text-slate-500">Unsaved changes</span> : null}
          <Button
            disabled={!draft || save.isPending}
            onClick={() => {
              setDraft(null);
              save.reset();
            }}
          >
            Discard changes
          </Button>
          <Button type="submit" variant="primary" disabled={!draft || save.isPending || !liveParsed.ok || Boolean(budgetError)}>
            Save
          </Button>
        </div>
      ) : null}
    </form>
  );
}
