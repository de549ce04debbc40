// Importing this file registers every node type. Add one import line per node file.
import './trigger.ts';
import './flow.ts';
import './data.ts';
import './leads.ts';
import './messaging.ts';
import './campaigns.ts';
import './utility.ts';
import './ai-agent.ts';
import './content.ts';
export { allNodes, getNode, registerNode } from './registry.ts';
