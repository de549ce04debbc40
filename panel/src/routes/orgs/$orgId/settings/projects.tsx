import { useState, type FormEvent } from 'react';
import { createFileRoute } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import { ApiError } from '../../../../api/client';
import { useList } from '../../../../lib/use-list';
import { compact, str } from '../../../../lib/list';
import { useRole } from '../../../../lib/account';
import { formatDate } from '../../../../lib/format';
import { Table, SortTh, Th, Td } from '../../../../components/ui/table';
import { Empty, FormError } from '../../../../components/ui/states';
import { QueryState } from '../../../../components/ui/query-state';
import { Button } from '../../../../components/ui/button';
import { TextField } from '../../../../components/ui/field';
import { projectsQuery, useCreateProject } from '../../../../queries/settings';
import { sortRows } from '../../../../components/settings/sort';

const SORTS = ['name', 'createdAt'] as const;
const DEFAULT_SORT = 'createdAt';

export const Route = createFileRoute('/orgs/$orgId/settings/projects')({
  validateSearch: (raw: Record<string, unknown>): { sort?: string } => {
    const sort = str(raw.sort);
    return compact({ sort: sort && sort !== DEFAULT_SORT && (SORTS as readonly string[]).includes(sort.replace(/^-/, '')) ? sort : undefined });
  },
  component: ProjectsPage,
});

function ProjectsPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const { clear } = useList(search);
  const { canAdmin } = useRole(orgId);
  const projects = useQuery(projectsQuery(orgId));
  const sort = search.sort ?? DEFAULT_SORT;
  const rows = sortRows(projects.data ?? [], sort, { name: (p) => p.name, createdAt: (p) => p.createdAt });
  const onSort = (next: string) => clear({ sort: next === DEFAULT_SORT ? undefined : next });
  return (
    <div className="max-w-4xl space-y-6">
      <p className="text-sm text-slate-600">
        Projects keep leads, workflows, content and reports apart, for example per brand or client. API keys and webhook endpoints can be limited to one
        project.
      </p>
      {canAdmin ? <NewProject orgId={orgId} /> : null}
      <QueryState query={projects} loading="Loading projects…" retry isEmpty={() => rows.length === 0} empty={<Empty title="No projects" />}>
        {() => (
          <Table label="Projects">
            <thead className="bg-slate-50">
              <tr>
                <SortTh field="name" label="Name" sort={sort} onSort={onSort} />
                <Th>Project ID</Th>
                <SortTh field="createdAt" label="Created" sort={sort} onSort={onSort} />
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {rows.map((p) => (
                <tr key={p.id}>
                  <Td className="font-medium text-slate-900">{p.name}</Td>
                  <Td>
                    <code className="font-mono text-xs">{p.id}</code>
                  </Td>
                  <Td className="whitespace-nowrap">{formatDate(p.createdAt)}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </QueryState>
    </div>
  );
}

function NewProject({ orgId }: { orgId: string }) {
  const [name, setName] = useState('');
  const create = useCreateProject(orgId, () => setName(''));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(name.trim());
  };
  const errors = create.error instanceof ApiError ? create.error.fieldErrors : {};
  return (
    <form aria-label="New project" onSubmit={submit} className="flex flex-wrap items-start gap-3 rounded-lg bg-white p-4 shadow-xs ring-1 ring-slate-200">
      <div className="min-w-64 flex-1">
        <TextField
          label="Project name"
          required
          maxLength={200}
          value={name}
          onChange={(e) => {
            setName(e.target.value);
            if (create.isSuccess) create.reset();
          }}
          error={errors.name}
        />
      </div>
      <div className="flex items-center gap-3 pt-6">
        <Button type="submit" variant="primary" disabled={create.isPending || name.trim() === ''}>
          Create project
        </Button>
        {create.isSuccess ? (
          <span role="status" className="text-sm text-emerald-700">
            Created {create.data.name}
          </span>
        ) : null}
      </div>
      <div className="basis-full">
        <FormError error={create.error} />
      </div>
    </form>
  );
}
