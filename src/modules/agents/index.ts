/**
 * The agents module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { agentRunsStarted } from './counts.ts';
export { agentRunsQueues } from './gauges.ts';
export { agentRoutes } from './routes.ts';
export { AGENTS_WAKE } from './runner.ts';
export { type NewTurn } from './turns.ts';
export { AgentsService } from './service.ts';
