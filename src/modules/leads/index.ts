/**
 * The leads module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { leadsHeld } from './counts.ts';
export { leadCounts, leadInScope, type LeadRow, leadsByIds, leadsMatching } from './queries.ts';
export { leadRoutes } from './routes.ts';
export { type Lead, type LeadInput, LeadsService, publicLead } from './service.ts';
