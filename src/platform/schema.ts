// Every table, for drizzle-kit and for code that needs the whole schema.
export * from '../modules/auth/tables.ts';
export * from '../modules/orgs/tables.ts';
export * from '../modules/api-keys/tables.ts';
export * from '../modules/leads/tables.ts';
export * from '../modules/events/tables.ts';
export * from './tables.ts';
export * from '../modules/notifications/tables.ts';
export * from '../modules/webhooks/tables.ts';
export * from '../modules/workflows/tables.ts';
export * from '../modules/agents/tables.ts';
export * from '../modules/reports/tables.ts';
export * from '../modules/usage/tables.ts';
export * from '../modules/budgets/tables.ts';
export * from '../modules/integrations/tables.ts';
export * from '../modules/media/tables.ts';
export * from '../modules/content/tables.ts';
export * from '../modules/stats/tables.ts';
