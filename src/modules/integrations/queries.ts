import { sql, type SQL } from 'drizzle-orm';

/** Reads of the integrations table for other modules' statements; this module alone writes it. */

/**
 * A subquery of the connected google integrations that have a GA4 property (`config.propertyId`)
 * or a Search Console site (`config.siteUrl`), aliased `i`: rows of `id`, `org_id` and `project_id`,
 * in the statement of the analytics scheduler (which reads its own runs of each in the same statement:
 * one query instead of one per integration).
 */
export function googleIntegrationsToSync(): SQL {
  return sql`select i.id, i.org_id, i.project_id
          from integrations i
          where i.provider = 'google' and i.status = 'connected'
            and (coalesce(i.config->>'propertyId', '') <> '' or coalesce(i.config->>'siteUrl', '') <> '')`;
}
