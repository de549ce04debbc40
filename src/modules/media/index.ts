/**
 * The media module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { mediaFileRoutes, mediaRoutes } from './routes.ts';
export { MediaService } from './service.ts';
