import { eq, isNull, or, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { forbidden } from '../../platform/errors.ts';

/**
 * CONTRACT §2, the project restriction of an API key, in one place so every module applies the
 * same rule: a key bound to a project sees and makes only that project's objects (another
 * project's are not found), organization-wide objects (project null) are read-only for it where a
 * module has them, and organization-level resources (members, keys, invitations, budget) are
 * refused to it.
 */
export interface ProjectScope {
  orgId: string;
  /** The project an API key is bound to; null for sessions and unbound keys. */
  projectId: string | null;
}

/**
 * The rows a scope may see, as a condition on the row's project column (undefined: no restriction).
 * `orgWide`: rows with no project are organization-wide and visible (read-only) to a bound key.
 */
export function visibleTo(scope: ProjectScope, column: AnyPgColumn, options: { orgWide: boolean }): SQL | undefined {
  if (!scope.projectId) return undefined;
  return options.orgWide ? or(isNull(column), eq(column, scope.projectId)) : eq(column, scope.projectId);
}

/** Changing a visible row: an organization-wide one is read-only for a bound key (403). */
export function assertCanChange(scope: ProjectScope, rowProjectId: string | null, what: string): void {
  if (scope.projectId && rowProjectId !== scope.projectId) {
    throw forbidden(`${what} is organization-wide; an API key bound to a project can only read it`);
  }
}

/**
 * An explicit `projectId: null` asks for an organization-wide object, which a bound key may not
 * make (403); an omitted projectId defaults to its project (OrgsService.projectFor).
 */
export function assertMayMakeOrgWide(scope: ProjectScope, requested: string | null | undefined, what: string): void {
  if (scope.projectId && requested === null) {
    throw forbidden(`An API key bound to a project cannot make an organization-wide ${what}`);
  }
}

/** Organization-level resources (members, API keys, invitations, the budget) are refused to a bound key. */
export function assertNotProjectBound(scope: ProjectScope): void {
  if (scope.projectId) throw forbidden('An API key bound to a project cannot use organization-level resources');
}
