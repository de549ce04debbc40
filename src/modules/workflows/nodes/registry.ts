import type { TSchema } from 'typebox';
import type { NodeDefinition } from './types.ts';

const definitions = new Map<string, NodeDefinition>();

/**
 * Adds a node type to the catalog. Node files call it at import time; nodes/index.ts imports every
 * node file, so importing the index registers the whole catalog (GET …/node-types and the engine
 * read the same definitions). Returns what takes it out again: a test's own node types leave the
 * catalog with the test file (the server's test files share their modules in a worker).
 */
export function registerNode<P extends TSchema>(def: NodeDefinition<P>): () => void {
  if (definitions.has(def.type)) throw new Error(`node type ${def.type} registered twice`);
  definitions.set(def.type, def as unknown as NodeDefinition);
  return () => {
    definitions.delete(def.type);
  };
}

export function getNode(type: string): NodeDefinition | undefined {
  return definitions.get(type);
}

export function allNodes(): NodeDefinition[] {
  return [...definitions.values()].sort((a, b) => a.type.localeCompare(b.type));
}
