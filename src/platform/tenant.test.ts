import { eq, type SQL } from 'drizzle-orm';
import { PgDialect, pgTable, text } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { assertCanChange, assertMayMakeOrgWide, inScope, inScopeOrgWide, tenant } from './tenant.ts';

// The filter's SQL, as the database receives it: the rule of CONTRACT §2 is in this text, once.
const things = pgTable('things', { id: text('id').primaryKey(), orgId: text('org_id').notNull(), projectId: text('project_id') });
const dialect = new PgDialect();
const render = (condition: SQL) => {
  const { sql, params } = dialect.sqlToQuery(condition);
  return { sql, params };
};

const org = { orgId: 'org_1', projectId: null };
const bound = { orgId: 'org_1', projectId: 'prj_1' };

describe('tenant filter', () => {
  it('an organization scope sees its organization only', () => {
    expect(render(tenant(org, things))).toEqual({ sql: '"things"."org_id" = $1', params: ['org_1'] });
  });

  it('a scope bound to a project sees that project only, or also organization-wide rows where the module has them', () => {
    expect(render(tenant(bound, things))).toEqual({ sql: '("things"."org_id" = $1 and "things"."project_id" = $2)', params: ['org_1', 'prj_1'] });
    expect(render(tenant(bound, things, { orgWide: true }))).toEqual({
      sql: '("things"."org_id" = $1 and ("things"."project_id" is null or "things"."project_id" = $2))',
      params: ['org_1', 'prj_1'],
    });
  });

  it("inScope adds the query's own conditions in one flat and, leaving out the undefined ones", () => {
    expect(render(inScope(bound, things, eq(things.id, 'th_1'), undefined))).toEqual({
      sql: '("things"."org_id" = $1 and "things"."project_id" = $2 and "things"."id" = $3)',
      params: ['org_1', 'prj_1', 'th_1'],
    });
    expect(render(inScopeOrgWide(org, things, eq(things.id, 'th_1')))).toEqual({
      sql: '("things"."org_id" = $1 and "things"."id" = $2)',
      params: ['org_1', 'th_1'],
    });
  });

  it('organization-wide rows are read-only for a bound scope, which cannot make one either', () => {
    const refused = 403;
    expect(() => assertCanChange(bound, null, 'This thing')).toThrow(expect.objectContaining({ statusCode: refused }));
    expect(() => assertCanChange(bound, 'prj_1', 'This thing')).not.toThrow();
    expect(() => assertCanChange(org, null, 'This thing')).not.toThrow();
    expect(() => assertMayMakeOrgWide(bound, null, 'thing')).toThrow(expect.objectContaining({ statusCode: refused }));
    expect(() => assertMayMakeOrgWide(bound, undefined, 'thing')).not.toThrow();
    expect(() => assertMayMakeOrgWide(org, null, 'thing')).not.toThrow();
  });
});
