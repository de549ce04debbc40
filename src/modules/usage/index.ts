/**
 * The usage module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { roundUsd } from './pricing.ts';
export { type UsageColumn, usageRecordsInRange } from './queries.ts';
export { monthOf } from './range.ts';
export { usageRoutes } from './routes.ts';
export { UsageService } from './service.ts';
