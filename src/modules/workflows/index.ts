/**
 * The workflows module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
import './nodes/index.ts';
export { APPROVALS_WAKE, ApprovalsService } from './approvals.ts';
export { workflowRunsStarted } from './counts.ts';
export { RunDriver } from './engine/driver.ts';
export { RUNS_WAKE } from './engine/writer.ts';
export { workflowRunsQueue } from './gauges.ts';
export { workflowHookRoutes } from './hooks.ts';
export { workflowTriggers } from './queries.ts';
export { workflowRoutes } from './routes.ts';
export { RunsService } from './runs.ts';
export { Scheduler, SchedulesService } from './schedules.ts';
export { WorkflowsService } from './service.ts';
export { findTemplate } from './templates/index.ts';
