import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { nodeTypesQuery } from '../../queries/workflows';
import { QueryState } from '../ui/query-state';
import { Table, Td, Th } from '../ui/table';

/** The params a node type takes, from its JSON Schema: names, required ones marked with *. */
function paramsOf(schema: Record<string, unknown>): string {
  const properties = schema.properties && typeof schema.properties === 'object' ? Object.keys(schema.properties) : [];
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  if (!properties.length) {
    const variants = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : [];
    return variants.length ? variants.map((v) => paramsOf(v as Record<string, unknown>)).join(' | ') : '—';
  }
  return properties.map((p) => (required.has(p) ? `${p}*` : p)).join(', ');
}

/** The node catalog (GET …/node-types), for writing a definition: what each type does, takes and emits. */
export function NodeTypesReference({ orgId }: { orgId: string }) {
  const [open, setOpen] = useState(false);
  const types = useQuery({ ...nodeTypesQuery(orgId), enabled: open });
  return (
    <details className="rounded-lg bg-white ring-1 ring-slate-200" onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary className="cursor-pointer px-4 py-3 text-sm font-semibold text-slate-900">Node types</summary>
      <div className="px-4 pb-4">
        <QueryState query={types}>
          {(catalog) => (
            <Table label="Node types">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Type</Th>
                  <Th>What it does</Th>
                  <Th>Params (* required)</Th>
                  <Th>Outputs</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {catalog.map((t) => (
                  <tr key={t.type}>
                    <Td className="font-mono text-xs whitespace-nowrap">{t.type}</Td>
                    <Td className="text-xs">{t.description}</Td>
                    <Td className="font-mono text-xs">{paramsOf(t.params)}</Td>
                    <Td className="font-mono text-xs">{t.outputs.join(', ')}</Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
        </QueryState>
      </div>
    </details>
  );
}
