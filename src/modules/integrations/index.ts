/**
 * The integrations module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { type Connector, connectorFor, providerOfPlatform } from './connectors/index.ts';
export { type ConnectorContext, type PublishOutcome, type PublishRequest } from './connectors/types.ts';
export { googleIntegrationsToSync } from './queries.ts';
export { integrationRoutes, oauthCallbackRoutes } from './routes.ts';
export { IntegrationsService, REAUTH_REQUIRED } from './service.ts';
