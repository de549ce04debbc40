/**
 * The invitations module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { invitationAcceptRoutes, invitationRoutes } from './routes.ts';
export { InvitationsService } from './service.ts';
