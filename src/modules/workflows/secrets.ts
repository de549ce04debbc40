import type { SecretBox } from '../../platform/crypto.ts';
import type { WorkflowNode } from './engine/graph.ts';

/** How a stored secret param is shown: sending it back unchanged keeps the stored value. */
export const SECRET_MASK = '********';
const SECRET_KEYS = new Set(['secret']);

interface Sealed { $sealed: string }
const isSealed = (v: unknown): v is Sealed => Boolean(v) && typeof v === 'object' && typeof (v as Sealed).$sealed === 'string';

/** Seals the `secret` params of nodes before they are stored (SecretBox, AES-256-GCM). */
export function sealNodes(nodes: WorkflowNode[], box: SecretBox, previous: WorkflowNode[] = []): WorkflowNode[] {
  return nodes.map((node) => {
    if (!node.params) return node;
    const params: Record<string, unknown> = { ...node.params };
    for (const key of Object.keys(params)) {
      if (!SECRET_KEYS.has(key) || typeof params[key] !== 'string') continue;
      if (params[key] === SECRET_MASK) {
        const before = previous.find((p) => p.id === node.id)?.params?.[key];
        if (isSealed(before)) {
          params[key] = before;
          continue;
        }
      }
      params[key] = { $sealed: box.seal(params[key] as string) };
    }
    return { ...node, params };
  });
}

/** Nodes as the API shows them: secrets masked. */
export function maskNodes(nodes: WorkflowNode[]): WorkflowNode[] {
  return nodes.map((node) => {
    if (!node.params || !Object.values(node.params).some(isSealed)) return node;
    return { ...node, params: Object.fromEntries(Object.entries(node.params).map(([k, v]) => [k, isSealed(v) ? SECRET_MASK : v])) };
  });
}

/** Params with secrets opened, for executing a node. */
export function unsealParams(params: Record<string, unknown> | undefined, box: SecretBox): Record<string, unknown> {
  if (!params || !Object.values(params).some(isSealed)) return params ?? {};
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, isSealed(v) ? box.open(v.$sealed) : v]));
}

/** For validation, sealed values count as the strings they hold. */
export function forValidation(nodes: WorkflowNode[]): WorkflowNode[] {
  return maskNodes(nodes);
}
