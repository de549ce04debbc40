/**
 * Workflows, their templates and the node catalog: the query keys (hierarchical, so invalidating
 * `workflowKeys.lists(orgId)` reaches every list of workflows, the names included), the queries the
 * pages read, and the changes with the cache entries each one makes stale.
 */
import { queryOptions, useMutation, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { api, unwrap, type QueryOf, type Schemas } from '../api/client';
import type { NodeTypeInfo } from '../components/workflows/canvas-model';
import { runKeys } from './runs';

export type Workflow = Schemas['Workflow'];
export type WorkflowListQuery = QueryOf<'/api/v1/orgs/{orgId}/workflows'>;

export const workflowKeys = {
  all: (orgId: string) => [orgId, 'workflows'] as const,
  lists: (orgId: string) => [...workflowKeys.all(orgId), 'list'] as const,
  list: (orgId: string, query: WorkflowListQuery) => [...workflowKeys.lists(orgId), query] as const,
  details: (orgId: string) => [...workflowKeys.all(orgId), 'one'] as const,
  detail: (orgId: string, id: string | undefined) => [...workflowKeys.details(orgId), id] as const,
  /** The editor's own copy of a workflow (see workflowEditorQuery). */
  editor: (orgId: string, id: string) => [...workflowKeys.detail(orgId, id), 'editor'] as const,
  evaluate: (orgId: string, input: { workflowId: string | null; runId?: string; nodeId: string; expression: string }) =>
    [...workflowKeys.all(orgId), 'evaluate', input.workflowId, input.runId, input.nodeId, input.expression] as const,
};

export const templateKeys = {
  all: (orgId: string) => [orgId, 'templates'] as const,
  detail: (orgId: string, id: string | null | undefined) => [...templateKeys.all(orgId), id] as const,
};

export const nodeTypeKeys = {
  all: (orgId: string) => [orgId, 'node-types'] as const,
};

const listWorkflows = (orgId: string, query: WorkflowListQuery) => unwrap(api.GET('/api/v1/orgs/{orgId}/workflows', { params: { path: { orgId }, query } }));

export const workflowsQuery = (orgId: string, query: WorkflowListQuery) =>
  queryOptions({
    queryKey: workflowKeys.list(orgId, query),
    queryFn: () => listWorkflows(orgId, query),
  });

/** The first 100 workflows, for names (usage grouped by workflow, the runs filter). */
export const workflowNamesQuery = (orgId: string, query: WorkflowListQuery = { pageSize: 100 }) => workflowsQuery(orgId, query);

export const fetchWorkflow = (orgId: string, id: string) => unwrap(api.GET('/api/v1/orgs/{orgId}/workflows/{id}', { params: { path: { orgId, id } } }));

export const workflowQuery = (orgId: string, id: string | undefined) =>
  queryOptions({
    queryKey: workflowKeys.detail(orgId, id),
    queryFn: () => fetchWorkflow(orgId, id!),
    enabled: Boolean(id),
  });

/**
 * Its own entry, fetched fresh each time the editor opens (the version it saves against must be
 * the stored one), and not refetched behind the author's back: the editor keeps its own copy.
 */
export const workflowEditorQuery = (orgId: string, id: string) =>
  queryOptions({
    queryKey: workflowKeys.editor(orgId, id),
    queryFn: () => fetchWorkflow(orgId, id),
    gcTime: 0,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });

export const templatesQuery = (orgId: string) =>
  queryOptions({
    queryKey: templateKeys.all(orgId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/templates', { params: { path: { orgId } } })),
    staleTime: 5 * 60_000,
  });

export const templateQuery = (orgId: string, id: string | null | undefined) =>
  queryOptions({
    queryKey: templateKeys.detail(orgId, id),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/templates/{id}', { params: { path: { orgId, id: id! } } })),
    staleTime: 5 * 60_000,
  });

export const nodeTypesQuery = (orgId: string) =>
  queryOptions({
    queryKey: nodeTypeKeys.all(orgId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/node-types', { params: { path: { orgId } } })) as Promise<NodeTypeInfo[]>,
    staleTime: 10 * 60_000,
  });

/** What an expression gives against a run's items (the server evaluates it; the panel never does). */
export function evaluateExpression(orgId: string, workflowId: string, body: { expression: string; runId: string; nodeId?: string }) {
  return unwrap(api.POST('/api/v1/orgs/{orgId}/workflows/{id}/expressions/evaluate', { params: { path: { orgId, id: workflowId } }, body }));
}

export type WorkflowBody = { name: string; description?: string | null; budgetUsd?: number | null; nodes: unknown[]; edges: unknown[]; [key: string]: unknown };

/** Creates a workflow, or changes one (with `version`: a change made elsewhere meanwhile is refused, 409). */
export function saveWorkflow(orgId: string, id: string | null, body: WorkflowBody, version?: number | null) {
  if (id)
    return unwrap(
      api.PATCH('/api/v1/orgs/{orgId}/workflows/{id}', {
        params: { path: { orgId, id } },
        body: { ...body, ...(version === null || version === undefined ? {} : { version }) } as never,
      }),
    );
  return unwrap(api.POST('/api/v1/orgs/{orgId}/workflows', { params: { path: { orgId } }, body: body as never }));
}

/** A workflow as saved: its entry set, every list of workflows stale. */
export function workflowSaved(queryClient: QueryClient, orgId: string, workflow: Workflow) {
  queryClient.setQueryData(workflowKeys.detail(orgId, workflow.id), workflow);
  return queryClient.invalidateQueries({ queryKey: workflowKeys.lists(orgId) });
}

/**
 * PATCH of a workflow's fields (active, or its definition with the version shown). `onSaved` runs in
 * the same turn as the cache update, so a page's own state and the new workflow render together.
 */
export function useUpdateWorkflow(orgId: string, id: string, onSaved?: (workflow: Workflow) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ body, version }: { body: Partial<WorkflowBody> & { active?: boolean }; version?: number }) =>
      saveWorkflow(orgId, id, body as WorkflowBody, version),
    onSuccess: (updated) => {
      onSaved?.(updated);
      return workflowSaved(queryClient, orgId, updated);
    },
  });
}

export function useDeleteWorkflow(orgId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/orgs/{orgId}/workflows/{id}', { params: { path: { orgId, id } } })),
    onSuccess: async (_, id) => {
      queryClient.removeQueries({ queryKey: workflowKeys.detail(orgId, id) });
      await queryClient.invalidateQueries({ queryKey: workflowKeys.lists(orgId) });
    },
  });
}

/** A new workflow, blank (a definition) or from a template (POST …/templates/:id/use). */
export function useCreateWorkflow(orgId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({
      templateId,
      body,
    }: {
      templateId: string | null;
      body: { name: string; projectId?: string; active?: boolean; nodes?: unknown[]; edges?: unknown[] };
    }) =>
      templateId
        ? unwrap(
            api.POST('/api/v1/orgs/{orgId}/templates/{id}/use', {
              params: { path: { orgId, id: templateId } },
              body: { name: body.name, projectId: body.projectId },
            }),
          )
        : saveWorkflow(orgId, null, body as WorkflowBody),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: workflowKeys.all(orgId) }),
  });
}

/** A new webhook URL (the previous one stops working); shown once. */
export function useRotateWebhookToken(orgId: string, id: string) {
  return useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/orgs/{orgId}/workflows/{id}/webhook-token', { params: { path: { orgId, id } } })),
  });
}

export const startRun = (orgId: string, id: string, body: { input: Record<string, unknown>; testMode: boolean }) =>
  unwrap(api.POST('/api/v1/orgs/{orgId}/workflows/{id}/run', { params: { path: { orgId, id } }, body }));

/** POST …/workflows/:id/run; every run query is stale after it. */
export function useStartRun(orgId: string, id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: { input: Record<string, unknown>; testMode: boolean }) => startRun(orgId, id, body),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: runKeys.all(orgId) }),
  });
}
