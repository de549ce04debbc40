/**
 * The orgs module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { membersHeld, storedPlan, storePlan } from './queries.ts';
export { orgListRoutes, orgRoutes } from './routes.ts';
export { type Organization, OrgsService } from './service.ts';
