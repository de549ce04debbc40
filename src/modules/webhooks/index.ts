/**
 * The webhooks module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { webhookEndpointsHeld } from './counts.ts';
export { WebhookDeliverer } from './deliverer.ts';
export { webhookDeliveriesQueue } from './gauges.ts';
export { webhookRoutes } from './routes.ts';
export { DELIVERIES_WAKE, WebhooksService } from './service.ts';
export { sendSigned } from './signer.ts';
