import { useState } from 'react';
import { Link } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import { templateQuery, templatesQuery } from '../../queries/workflows';
import { Badge, PageHeader } from '../ui/page';
import { QueryState } from '../ui/query-state';
import { WorkflowGraph } from './workflow-graph';

const openLink = 'inline-flex items-center rounded-md bg-indigo-600 px-3.5 py-2 text-sm font-medium text-white hover:bg-indigo-500';

/**
 * The templates (GET …/templates), each previewed as a graph (GET …/templates/:id) and opened on
 * the canvas editor without creating anything: the workflow exists once it is saved there.
 */
export function TemplatesGallery({ orgId }: { orgId: string }) {
  const [chosen, setChosen] = useState<string | null>(null);
  const templates = useQuery(templatesQuery(orgId));
  const detail = useQuery({ ...templateQuery(orgId, chosen), enabled: chosen !== null });
  return (
    <div>
      <Link to="/orgs/$orgId/workflows" params={{ orgId }} className="text-sm text-indigo-700 hover:underline">
        ← Workflows
      </Link>
      <PageHeader
        title="Workflow templates"
        description="Start from a template on the canvas: change what you need, then save it as a workflow of your own."
        actions={
          <Link
            to="/orgs/$orgId/workflows/new"
            params={{ orgId }}
            className="inline-flex items-center rounded-md bg-white px-3.5 py-2 text-sm font-medium text-slate-800 ring-1 ring-slate-300 hover:bg-slate-50"
          >
            Blank workflow
          </Link>
        }
      />
      <QueryState query={templates} loading="Loading templates…" retry>
        {(templateList) => (
          <div className="grid gap-6 lg:grid-cols-[minmax(0,2fr)_minmax(0,3fr)]">
            <ul aria-label="Templates" className="space-y-2">
              {templateList.map((t) => (
                <li key={t.id}>
                  <button
                    type="button"
                    aria-pressed={chosen === t.id}
                    onClick={() => setChosen(t.id)}
                    className={`w-full rounded-lg p-4 text-left ring-1 transition-colors ${chosen === t.id ? 'bg-indigo-50 ring-indigo-500' : 'bg-white ring-slate-200 hover:bg-slate-50'} ${t.available ? '' : 'opacity-70'}`}
                  >
                    <span className="flex flex-wrap items-center gap-2 font-medium text-slate-900">
                      {t.name}
                      <Badge tone="slate">{t.category}</Badge>
                      {t.available ? null : <Badge tone="red">unavailable here</Badge>}
                    </span>
                    <span className="mt-1 block text-sm text-slate-600">{t.description}</span>
                    <span className="mt-1 block font-mono text-xs text-slate-400">{t.nodeTypes.join(' · ')}</span>
                  </button>
                </li>
              ))}
            </ul>
            <section aria-label="Template preview" className="lg:sticky lg:top-4 lg:self-start">
              {chosen === null ? (
                <p className="rounded-lg border border-dashed border-slate-300 bg-white p-10 text-center text-sm text-slate-500">
                  Choose a template to preview it.
                </p>
              ) : (
                <QueryState query={detail} loading="Loading the template…">
                  {(template) => (
                    <div className="space-y-3 rounded-lg bg-white p-4 ring-1 ring-slate-200">
                      <div className="flex flex-wrap items-start justify-between gap-2">
                        <div>
                          <h2 className="text-lg font-semibold text-slate-900">{template.name}</h2>
                          <p className="text-sm text-slate-600">{template.description}</p>
                        </div>
                        {template.available ? (
                          <Link to="/orgs/$orgId/workflows/new" params={{ orgId }} search={{ template: template.id }} className={openLink}>
                            Open in editor
                          </Link>
                        ) : (
                          <span className="text-sm text-red-700">This server lacks a node type it needs.</span>
                        )}
                      </div>
                      <WorkflowGraph nodes={template.nodes} edges={template.edges} label={`Graph of ${template.name}`} height="h-80" />
                      <p className="text-xs text-slate-500">
                        {template.nodes.length} steps. Opening it creates nothing: the workflow is created, inactive, when you save it in the editor.
                      </p>
                    </div>
                  )}
                </QueryState>
              )}
            </section>
          </div>
        )}
      </QueryState>
    </div>
  );
}
