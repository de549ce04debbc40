import { and, eq, isNull, or, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { Scope } from './context.ts';
import { forbidden } from './errors.ts';

/**
 * The tenant filter, defined once (the idea of svix's `secure_find`): every store query of a row a
 * caller names goes through `tenant()` or `inScope()`, so another organization's row is simply not
 * found (404), and CONTRACT §2 applies the same way in every module: a scope bound to a project
 * sees that project's rows only; organization-wide rows (project null) are visible to it, read-only,
 * where the module has them (`orgWide`).
 */

/** A table of tenant rows: an organization and a project (null: organization-wide). */
export interface TenantTable {
  orgId: AnyPgColumn;
  projectId: AnyPgColumn;
}

/** The part of a scope the filter reads (internal lookups by organization have no actor). */
export type Tenant = Pick<Scope, 'orgId' | 'projectId'>;

export interface TenantOptions {
  /** Rows with no project are organization-wide and visible (read-only) to a scope bound to a project. */
  orgWide?: boolean;
}

function project(scope: Tenant, table: TenantTable, options: TenantOptions): SQL | undefined {
  if (!scope.projectId) return undefined;
  return options.orgWide ? or(isNull(table.projectId), eq(table.projectId, scope.projectId)) : eq(table.projectId, scope.projectId);
}

/** The rows of `table` the scope may see: `org_id = $1 [and project_id = $2]`. */
export function tenant(scope: Tenant, table: TenantTable, options: TenantOptions = {}): SQL {
  return and(eq(table.orgId, scope.orgId), project(scope, table, options))!;
}

/** The same rule for a row already in hand (one kept in a cache): whether `tenant()` would find it. */
export function visibleTo(scope: Tenant, row: { orgId: string; projectId: string | null }, options: TenantOptions = {}): boolean {
  if (row.orgId !== scope.orgId) return false;
  return !scope.projectId || row.projectId === scope.projectId || (options.orgWide === true && row.projectId === null);
}

/** `tenant()` and the query's own conditions, in one flat `and` (undefined conditions are left out). */
export function inScope(scope: Tenant, table: TenantTable, ...conditions: (SQL | undefined)[]): SQL {
  return and(eq(table.orgId, scope.orgId), project(scope, table, {}), ...conditions)!;
}

/** `inScope()` for a module whose organization-wide rows are visible to a scope bound to a project. */
export function inScopeOrgWide(scope: Tenant, table: TenantTable, ...conditions: (SQL | undefined)[]): SQL {
  return and(eq(table.orgId, scope.orgId), project(scope, table, { orgWide: true }), ...conditions)!;
}

/** Changing a visible row: an organization-wide one (or another project's) is read-only for a bound scope (403). */
export function assertCanChange(scope: Tenant, rowProjectId: string | null, what: string): void {
  if (scope.projectId && rowProjectId !== scope.projectId) {
    throw forbidden(`${what} is organization-wide; an API key bound to a project can only read it`);
  }
}

/**
 * An explicit `projectId: null` asks for an organization-wide object, which a bound scope may not
 * make (403); an omitted projectId defaults to its project (OrgsService.projectFor).
 */
export function assertMayMakeOrgWide(scope: Tenant, requested: string | null | undefined, what: string): void {
  if (scope.projectId && requested === null) {
    throw forbidden(`An API key bound to a project cannot make an organization-wide ${what}`);
  }
}
