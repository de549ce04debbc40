/**
 * The events module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { Dispatcher } from './dispatcher.ts';
export { type OrgMessage, OrgStream } from './org-stream.ts';
export { eventRows, outboxCtes, outboxParam } from './outbox.ts';
export { conversationsMessagedForLead, dispatchedEventsPerHour, eventById, eventsAboutLead, eventsInRange } from './queries.ts';
export { orgStreamRoutes } from './routes.ts';
export { DISPATCHER_WAKE, type EventRow, EventsService, type NewEvent, toEnvelope } from './service.ts';
