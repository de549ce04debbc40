/**
 * The reports module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { ACTION_DESCRIPTIONS } from './actions.ts';
export { reportRoutes } from './routes.ts';
export { REPORT_TYPES, ReportsService, type ReportType } from './service.ts';
