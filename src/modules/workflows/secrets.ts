import type { SecretBox } from '../../platform/crypto.ts';
import { invalid, type WorkflowNode } from './engine/graph.ts';

/** How a stored secret param is shown: sending it back unchanged keeps the stored value. */
export const SECRET_MASK = '********';

interface Sealed {
  $sealed: string;
}
const isSealed = (v: unknown): v is Sealed => Boolean(v) && typeof v === 'object' && typeof (v as Sealed).$sealed === 'string';

/**
 * Which params hold credentials, as paths into the params: every node's `secret` (signing secrets),
 * and every header value of `utility.httpRequest` (`Authorization`, `X-Api-Key` … — any header may
 * carry one, so all are sealed rather than guessing by name).
 */
function isSecretPath(type: string, path: string[]): boolean {
  if (path.length === 1 && path[0] === 'secret') return true;
  return type === 'utility.httpRequest' && path.length === 2 && path[0] === 'headers';
}

/** The params tree with every leaf passed through `leaf` (objects and arrays rebuilt, others kept). */
function mapTree(value: unknown, path: string[], leaf: (v: unknown, path: string[]) => unknown): unknown {
  if (isSealed(value) || value === null || typeof value !== 'object') return leaf(value, path);
  if (Array.isArray(value)) return value.map((v, i) => mapTree(v, [...path, String(i)], leaf));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapTree(v, [...path, k], leaf)]));
}

function at(params: Record<string, unknown> | undefined, path: string[]): unknown {
  let value: unknown = params;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * Seals the credential params of nodes before they are stored (SecretBox, AES-256-GCM): the
 * workflow row, and so the copy of the definition each run takes, holds no plaintext. A value sent
 * back as the mask keeps what was stored at the same node and path.
 */
export function sealNodes(nodes: WorkflowNode[], box: SecretBox, previous: WorkflowNode[] = []): WorkflowNode[] {
  return nodes.map((node) => {
    if (!node.params) return node;
    const before = previous.find((p) => p.id === node.id)?.params;
    const params = mapTree(node.params, [], (value, path) => {
      // Only this function makes sealed values; one written by a client would be opened at run time.
      if (isSealed(value)) throw invalid(`Node "${node.id}": "$sealed" is reserved`, { nodeId: node.id, param: path.join('.') });
      if (typeof value !== 'string' || !isSecretPath(node.type, path)) return value;
      if (value === SECRET_MASK) {
        const kept = at(before, path);
        if (isSealed(kept)) return kept;
      }
      return { $sealed: box.seal(value) };
    }) as Record<string, unknown>;
    return { ...node, params };
  });
}

const hasSealed = (value: unknown): boolean => isSealed(value) || (value !== null && typeof value === 'object' && Object.values(value).some(hasSealed));

/** Nodes as the API shows them: secrets masked. */
export function maskNodes(nodes: WorkflowNode[]): WorkflowNode[] {
  return nodes.map((node) => {
    if (!hasSealed(node.params)) return node;
    return { ...node, params: mapTree(node.params, [], (v) => (isSealed(v) ? SECRET_MASK : v)) as Record<string, unknown> };
  });
}

/** Params with secrets opened, for executing a node. */
export function unsealParams(params: Record<string, unknown> | undefined, box: SecretBox): Record<string, unknown> {
  if (!hasSealed(params)) return params ?? {};
  return mapTree(params, [], (v) => (isSealed(v) ? box.open(v.$sealed) : v)) as Record<string, unknown>;
}

/** For validation, sealed values count as the strings they hold. */
export function forValidation(nodes: WorkflowNode[]): WorkflowNode[] {
  return maskNodes(nodes);
}
