/** Agents, their runs and types: keys, queries and changes. */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type BodyOf, type QueryOf, type Schemas } from '../api/client';

export type AgentListQuery = QueryOf<'/api/v1/orgs/{orgId}/agents'>;
export type AgentRunListQuery = QueryOf<'/api/v1/orgs/{orgId}/agent-runs'>;
type AgentRun = Schemas['AgentRun'];

export const agentKeys = {
  all: (orgId: string) => [orgId, 'agents'] as const,
  every: (orgId: string) => [...agentKeys.all(orgId), 'all'] as const,
  list: (orgId: string, query: AgentListQuery) => [...agentKeys.all(orgId), 'list', query] as const,
};

export const agentRunKeys = {
  all: (orgId: string) => [orgId, 'agent-runs'] as const,
  list: (orgId: string, query: AgentRunListQuery) => [...agentRunKeys.all(orgId), 'list', query] as const,
  detail: (orgId: string, id: string) => [...agentRunKeys.all(orgId), 'one', id] as const,
};

export const agentTypeKeys = {
  all: (orgId: string) => [orgId, 'agent-types'] as const,
};

/** The agent types with their descriptions and tools (they change only with the service). */
export const agentTypesQuery = (orgId: string) =>
  queryOptions({
    queryKey: agentTypeKeys.all(orgId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/agent-types', { params: { path: { orgId } } })),
    staleTime: 5 * 60_000,
  });

export const agentsQuery = (orgId: string, query: AgentListQuery) =>
  queryOptions({
    queryKey: agentKeys.list(orgId, query),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/agents', { params: { path: { orgId }, query } })),
  });

/** Every saved agent, by name (an organization keeps a few: the first 100). */
export const allAgentsQuery = (orgId: string) =>
  queryOptions({
    queryKey: agentKeys.every(orgId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/agents', { params: { path: { orgId }, query: { pageSize: 100, sort: 'name' } } })),
  });

export const agentRunsQuery = (orgId: string, query: AgentRunListQuery) =>
  queryOptions({
    queryKey: agentRunKeys.list(orgId, query),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/agent-runs', { params: { path: { orgId }, query } })),
  });

export const agentRunQuery = (orgId: string, id: string) =>
  queryOptions({
    queryKey: agentRunKeys.detail(orgId, id),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/agent-runs/{id}', { params: { path: { orgId, id } } })),
  });

type AgentBody = BodyOf<'/api/v1/orgs/{orgId}/agents', 'post'>;

/** Creates a saved agent, or changes one (`id`): every agent query is stale. */
export function useSaveAgent(orgId: string, id: string | null) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: AgentBody) =>
      id
        ? unwrap(api.PATCH('/api/v1/orgs/{orgId}/agents/{id}', { params: { path: { orgId, id } }, body }))
        : unwrap(api.POST('/api/v1/orgs/{orgId}/agents', { params: { path: { orgId } }, body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: agentKeys.all(orgId) }),
  });
}

/** Deletes a saved agent; `onDone` runs first (the dialog closes). */
export function useDeleteAgent(orgId: string, onDone: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/orgs/{orgId}/agents/{id}', { params: { path: { orgId, id } } })),
    onSuccess: async () => {
      onDone();
      await queryClient.invalidateQueries({ queryKey: agentKeys.all(orgId) });
    },
  });
}

export type AgentRunRequest =
  | { kind: 'saved'; agentId: string; body: BodyOf<'/api/v1/orgs/{orgId}/agents/{id}/run', 'post'> }
  | { kind: 'adhoc'; body: BodyOf<'/api/v1/orgs/{orgId}/agents/run', 'post'> };

/** Runs a saved agent, or one described here: the agent runs are stale. */
export function useRunAgent(orgId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (request: AgentRunRequest) =>
      request.kind === 'saved'
        ? unwrap(api.POST('/api/v1/orgs/{orgId}/agents/{id}/run', { params: { path: { orgId, id: request.agentId } }, body: request.body }))
        : unwrap(api.POST('/api/v1/orgs/{orgId}/agents/run', { params: { path: { orgId } }, body: request.body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: agentRunKeys.all(orgId) }),
  });
}

/** Cancels a run: its entry keeps the steps it had when the answer has none; the runs are stale. */
export function useCancelAgentRun(orgId: string, id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/orgs/{orgId}/agent-runs/{id}/cancel', { params: { path: { orgId, id } } })),
    onSuccess: (data) => {
      queryClient.setQueryData(agentRunKeys.detail(orgId, id), (old: AgentRun | undefined) => ({ ...data, steps: data.steps ?? old?.steps }));
      void queryClient.invalidateQueries({ queryKey: agentRunKeys.all(orgId) });
    },
  });
}
