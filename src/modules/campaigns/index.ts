/**
 * The campaigns module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { campaignMessagesSent } from './counts.ts';
export { campaignRoutes, unsubscribeRoutes } from './routes.ts';
export { CampaignsService } from './service.ts';
export { UnsubscribeLinks } from './unsubscribe.ts';
