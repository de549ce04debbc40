import type { Db } from '../../platform/db.ts';
import { tenant, type Tenant } from '../../platform/tenant.ts';
import { workflows } from './tables.ts';

/** Reads of the workflows tables for other modules; this module alone writes them. */

/** The triggers of an organization's workflows; for a project, its own and the organization-wide ones. */
export function workflowTriggers(db: Db, scope: Tenant) {
  return db
    .select({ triggerType: workflows.triggerType, triggerEvents: workflows.triggerEvents })
    .from(workflows)
    .where(tenant(scope, workflows, { orgWide: true }));
}
