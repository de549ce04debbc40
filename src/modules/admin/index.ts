/**
 * The admin module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { type AdminChannel, localUrl, newAdminToken, readChannel, writeChannel } from './channel.ts';
export { createApiKey, createOwner, setPlan } from './operations.ts';
export { adminRoutes } from './routes.ts';
