// Importing this file registers every node type. Add one import line per node file.
import './trigger.ts';
export { allNodes, getNode, registerNode } from './registry.ts';
