import { useQuery } from '@tanstack/react-query';
import { ReactFlowProvider } from '@xyflow/react';
import type { Schemas } from '../../api/client';
import { nodeTypesQuery } from '../../queries/workflows';
import { useRole } from '../../lib/account';
import { ErrorState, Loading } from '../ui/states';
import { WorkflowEditor } from './editor';
import type { OpenedTemplate } from './editor/doc';

/** The editor once what it needs is loaded: the node catalog, and the workflow or the template. */
export function EditorPage({ orgId, workflow, template }: { orgId: string; workflow: Schemas['Workflow'] | null; template: OpenedTemplate | null }) {
  const types = useQuery(nodeTypesQuery(orgId));
  const { canWrite } = useRole(orgId);
  if (types.isPending) return <Loading label="Loading the node catalog…" />;
  if (types.isError) return <ErrorState error={types.error} retry={() => void types.refetch()} />;
  return (
    <ReactFlowProvider>
      <WorkflowEditor
        key={workflow?.id ?? `new:${template?.id ?? ''}`}
        orgId={orgId}
        workflow={workflow}
        template={template}
        nodeTypes={types.data}
        canWrite={canWrite}
      />
    </ReactFlowProvider>
  );
}
