import { useQuery } from '@tanstack/react-query';
import { ReactFlowProvider } from '@xyflow/react';
import { api, unwrap, type Schemas } from '../../api/client';
import { useRole } from '../../lib/account';
import { ErrorState, Loading } from '../ui/states';
import type { NodeTypeInfo } from './canvas-model';
import { WorkflowEditor, type OpenedTemplate } from './editor';

export function useNodeTypes(orgId: string) {
  return useQuery({
    queryKey: [orgId, 'node-types'],
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/node-types', { params: { path: { orgId } } })) as Promise<NodeTypeInfo[]>,
    staleTime: 10 * 60_000,
  });
}

/** The editor once what it needs is loaded: the node catalog, and the workflow or the template. */
export function EditorPage({ orgId, workflow, template }: { orgId: string; workflow: Schemas['Workflow'] | null; template: OpenedTemplate | null }) {
  const types = useNodeTypes(orgId);
  const { canWrite } = useRole(orgId);
  if (types.isPending) return <Loading label="Loading the node catalog…" />;
  if (types.isError) return <ErrorState error={types.error} retry={() => void types.refetch()} />;
  return (
    <ReactFlowProvider>
      <WorkflowEditor key={workflow?.id ?? `new:${template?.id ?? ''}`} orgId={orgId} workflow={workflow} template={template} nodeTypes={types.data} canWrite={canWrite} />
    </ReactFlowProvider>
  );
}
