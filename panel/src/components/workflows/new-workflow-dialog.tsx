import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import type { Schemas } from '../../api/client';
import { templateQuery, templatesQuery, useCreateWorkflow } from '../../queries/workflows';
import { projectsQuery } from '../../queries/settings';
import { Modal } from '../ui/dialog';
import { Button } from '../ui/button';
import { SelectField, TextField } from '../ui/field';
import { Badge } from '../ui/page';
import { FormError } from '../ui/states';
import { QueryState } from '../ui/query-state';
import { WorkflowGraph } from './workflow-graph';

const BLANK = 'blank';

/** A blank workflow: a manual trigger, to be filled in the editor. */
const BLANK_DEFINITION = { nodes: [{ id: 'trigger', type: 'trigger.manual', name: 'Start' }], edges: [] };

/**
 * A new workflow, from a built-in template (GET …/templates, previewed with GET …/templates/:id,
 * created with POST …/templates/:id/use) or blank. Templates that need a node type this server
 * lacks are shown but cannot be used. "Open in editor" opens the choice on the canvas editor instead,
 * where nothing is created until it is saved.
 */
export function NewWorkflowDialog({
  orgId,
  open,
  onOpenChange,
  onCreated,
}: {
  orgId: string;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  onCreated: (workflow: Schemas['Workflow']) => void;
}) {
  const navigate = useNavigate();
  const [choice, setChoice] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [projectId, setProjectId] = useState('');
  const templates = useQuery({ ...templatesQuery(orgId), enabled: open });
  const projects = useQuery({ ...projectsQuery(orgId), enabled: open });
  const detail = useQuery({ ...templateQuery(orgId, choice), enabled: open && choice !== null && choice !== BLANK });
  const create = useCreateWorkflow(orgId);
  const submit = () => {
    const body = { name: name.trim(), projectId: projectId || undefined };
    create.mutate(choice === BLANK ? { templateId: null, body: { ...body, active: false, ...BLANK_DEFINITION } } : { templateId: choice, body }, {
      onSuccess: (workflow) => {
        close(false);
        onCreated(workflow);
      },
    });
  };
  const close = (next: boolean) => {
    onOpenChange(next);
    if (!next) {
      setChoice(null);
      setName('');
      create.reset();
    }
  };
  const pick = (id: string, defaultName: string) => {
    setChoice(id);
    setName(defaultName);
    create.reset();
  };
  const chosen = templates.data?.find((t) => t.id === choice);

  return (
    <Modal open={open} onOpenChange={close} title="New workflow" description="Start from a template and adjust it in the editor, or start blank." wide>
      <QueryState query={templates} loading="Loading templates…" retry>
        {(templateList) => (
          <form
            className="space-y-4"
            onSubmit={(e) => {
              e.preventDefault();
              if (choice && name.trim()) submit();
            }}
          >
            <fieldset>
              <legend className="mb-2 text-sm font-medium text-slate-700">Start from</legend>
              <div className="grid max-h-72 gap-2 overflow-y-auto pr-1 sm:grid-cols-2">
                {templateList.map((t) => (
                  <label
                    key={t.id}
                    className={`flex cursor-pointer gap-2 rounded-md p-3 text-sm ring-1 ${choice === t.id ? 'bg-indigo-50 ring-indigo-500' : 'ring-slate-200 hover:bg-slate-50'} ${t.available ? '' : 'opacity-60'}`}
                  >
                    <input type="radio" name="template" value={t.id} checked={choice === t.id} onChange={() => pick(t.id, t.name)} className="mt-1" />
                    <span>
                      <span className="flex flex-wrap items-center gap-1.5 font-medium text-slate-900">
                        {t.name} <Badge tone="slate">{t.category}</Badge>
                        {t.available ? null : <Badge tone="red">unavailable here</Badge>}
                      </span>
                      <span className="mt-0.5 block text-xs text-slate-600">{t.description}</span>
                    </span>
                  </label>
                ))}
                <label
                  className={`flex cursor-pointer gap-2 rounded-md p-3 text-sm ring-1 ${choice === BLANK ? 'bg-indigo-50 ring-indigo-500' : 'ring-slate-200 hover:bg-slate-50'}`}
                >
                  <input type="radio" name="template" value={BLANK} checked={choice === BLANK} onChange={() => pick(BLANK, '')} className="mt-1" />
                  <span>
                    <span className="block font-medium text-slate-900">Blank workflow</span>
                    <span className="mt-0.5 block text-xs text-slate-600">A manual trigger only; add nodes and edges in the editor. Created inactive.</span>
                  </span>
                </label>
              </div>
            </fieldset>
            {choice && choice !== BLANK ? (
              <section aria-label="Template preview">
                <QueryState query={detail} loading="Loading the template…">
                  {(template) => (
                    <>
                      <WorkflowGraph nodes={template.nodes} edges={template.edges} label={`Graph of ${template.name}`} height="h-56" />
                      <p className="mt-1 text-xs text-slate-500">
                        Nodes: {template.nodeTypes.join(', ')}.{' '}
                        {template.active
                          ? 'The workflow is created active: its trigger fires as soon as it exists (deactivate it first if its placeholders need replacing).'
                          : 'The workflow is created inactive.'}
                      </p>
                    </>
                  )}
                </QueryState>
              </section>
            ) : null}
            {choice ? (
              <div className="grid gap-3 sm:grid-cols-2">
                <TextField label="Name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
                {projects.data && projects.data.length > 1 ? (
                  <SelectField
                    label="Project"
                    value={projectId}
                    onChange={(e) => setProjectId(e.target.value)}
                    options={[{ value: '', label: 'Default project' }, ...projects.data.map((p) => ({ value: p.id, label: p.name }))]}
                  />
                ) : null}
              </div>
            ) : null}
            <FormError error={create.error} />
            <div className="flex justify-end gap-2">
              <Button onClick={() => close(false)}>Cancel</Button>
              {choice ? (
                <Button
                  disabled={chosen !== undefined && !chosen.available}
                  onClick={() => {
                    const template = choice === BLANK ? undefined : choice;
                    close(false);
                    void navigate({ to: '/orgs/$orgId/workflows/new', params: { orgId }, search: { template } });
                  }}
                >
                  Open in editor
                </Button>
              ) : null}
              <Button type="submit" variant="primary" disabled={!choice || !name.trim() || create.isPending || (chosen !== undefined && !chosen.available)}>
                Create workflow
              </Button>
            </div>
          </form>
        )}
      </QueryState>
    </Modal>
  );
}
