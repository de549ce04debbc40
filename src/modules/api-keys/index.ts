/**
 * The api-keys module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { apiKeyRoutes } from './routes.ts';
export { ApiKeysService, SCOPES } from './service.ts';
