/**
 * The content module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { scheduledPostsQueue } from './gauges.ts';
export { Publisher } from './publisher.ts';
export { postCount } from './queries.ts';
export { contentRoutes } from './routes.ts';
export { ContentService, type DraftInput, PUBLISHER_WAKE } from './service.ts';
