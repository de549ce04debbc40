/**
 * The analytics module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { analyticsDaysSummed } from './queries.ts';
export { analyticsRoutes } from './routes.ts';
export { METRICS } from './rules.ts';
export { AnalyticsService } from './service.ts';
export { ANALYTICS_WAKE } from './sync.ts';
