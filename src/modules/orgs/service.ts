import { and, asc, eq, or } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { transaction, type Db } from '../../platform/db.ts';
import { conflict, forbidden, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { countUsers, userByEmail, usersByIds } from '../auth/index.ts';
import { memberships, organizations, projects } from './tables.ts';
import type { Role } from '../../platform/context.ts';
import type { OrgsPlansPort, OrgsPorts } from './ports.ts';

// The roles are part of the request context (platform/context.ts); the memberships are this module's.
export { ROLES, type Role } from '../../platform/context.ts';

export type Organization = typeof organizations.$inferSelect;
export type Project = typeof projects.$inferSelect;

/** Organizations, their projects and members. */
export class OrgsService {
  private readonly db: Db;
  private readonly defaults = new Map<string, string>();
  private readonly known = new Set<string>();
  /** The plan new organizations get, and the members limit (CONTRACT §12). */
  private readonly plans: OrgsPlansPort | null;

  constructor(deps: Deps, ports: OrgsPorts) {
    this.db = deps.db;
    this.plans = ports.plans ?? null;
  }

  /** A new organization with its owner and its "Default" project, in the caller's transaction. */
  async create(tx: Db, input: { name: string; ownerUserId: string }): Promise<Organization> {
    const [org] = await tx
      .insert(organizations)
      .values({ id: newId('organization'), name: input.name, plan: this.plans?.initialPlan ?? null })
      .returning();
    await tx.insert(projects).values({ id: newId('project'), orgId: org!.id, name: 'Default' });
    await tx.insert(memberships).values({ id: newId('membership'), orgId: org!.id, userId: input.ownerUserId, role: 'owner' });
    return org!;
  }

  listForUser(userId: string): Promise<Organization[]> {
    return this.db
      .select({
        id: organizations.id,
        name: organizations.name,
        plan: organizations.plan,
        createdAt: organizations.createdAt,
        updatedAt: organizations.updatedAt,
      })
      .from(organizations)
      .innerJoin(memberships, eq(memberships.orgId, organizations.id))
      .where(eq(memberships.userId, userId))
      .orderBy(asc(organizations.id));
  }

  async get(orgId: string): Promise<Organization> {
    const [org] = await this.db.select().from(organizations).where(eq(organizations.id, orgId));
    if (!org) throw notFound('Organization');
    return org;
  }

  /** The organizations whose id or name is `idOrName` (the CLI names them either way; names are not unique). */
  findByIdOrName(idOrName: string): Promise<Organization[]> {
    return this.db
      .select()
      .from(organizations)
      .where(or(eq(organizations.id, idOrName), eq(organizations.name, idOrName)));
  }

  async exists(orgId: string): Promise<boolean> {
    const [row] = await this.db.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, orgId));
    return Boolean(row);
  }

  async roleOf(orgId: string, userId: string): Promise<Role | null> {
    const [row] = await this.db
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)));
    return (row?.role as Role | undefined) ?? null;
  }

  membershipsOf(userId: string): Promise<{ organizationId: string; role: string }[]> {
    return this.db
      .select({ organizationId: memberships.orgId, role: memberships.role })
      .from(memberships)
      .where(eq(memberships.userId, userId))
      .orderBy(asc(memberships.orgId));
  }

  listProjects(orgId: string): Promise<Project[]> {
    return this.db.select().from(projects).where(eq(projects.orgId, orgId)).orderBy(asc(projects.id));
  }

  async createProject(orgId: string, name: string): Promise<Project> {
    const [project] = await this.db
      .insert(projects)
      .values({ id: newId('project'), orgId, name })
      .returning();
    return project!;
  }

  /**
   * The project a resource goes to when none is named: the organization's first. Projects are never
   * deleted or moved, so the answer, once found, is kept.
   */
  async defaultProjectId(orgId: string): Promise<string> {
    const known = this.defaults.get(orgId);
    if (known) return known;
    const [row] = await this.db.select({ id: projects.id }).from(projects).where(eq(projects.orgId, orgId)).orderBy(asc(projects.id)).limit(1);
    if (!row) throw notFound('Project');
    if (this.defaults.size >= 10_000) this.defaults.clear();
    this.defaults.set(orgId, row.id);
    return row.id;
  }

  /** 404 unless the project belongs to the organization (a project never changes organization). */
  async assertProject(orgId: string, projectId: string): Promise<void> {
    const key = `${orgId}/${projectId}`;
    if (this.known.has(key)) return;
    const [row] = await this.db
      .select({ id: projects.id })
      .from(projects)
      .where(and(eq(projects.orgId, orgId), eq(projects.id, projectId)));
    if (!row) throw notFound('Project');
    if (this.known.size >= 10_000) this.known.clear();
    this.known.add(key);
  }

  /**
   * The project a request may use: an API key bound to a project always gets that project (naming
   * another is a 403, CONTRACT §2, whether or not that project exists); otherwise the requested
   * project, which must belong to the organization (else 404), or null when none is named.
   */
  async projectFor(scope: { orgId: string; projectId: string | null }, requested: string | null | undefined): Promise<string | null> {
    if (scope.projectId) {
      if (requested && requested !== scope.projectId) throw forbidden('This API key is bound to another project');
      return scope.projectId;
    }
    // An empty string is a name too: checked (404), never stored as a dangling reference.
    if (requested !== null && requested !== undefined) await this.assertProject(scope.orgId, requested);
    return requested ?? null;
  }

  async listMembers(orgId: string) {
    const rows = await this.db.select().from(memberships).where(eq(memberships.orgId, orgId)).orderBy(asc(memberships.id));
    const byId = new Map((await usersByIds(this.db, [...new Set(rows.map((m) => m.userId))])).map((u) => [u.id, u]));
    return rows.flatMap((m) => {
      const user = byId.get(m.userId);
      return user ? [{ id: m.id, userId: user.id, email: user.email, name: user.name, role: m.role, createdAt: m.createdAt }] : [];
    });
  }

  async addMember(orgId: string, email: string, role: Role) {
    const user = await userByEmail(this.db, email);
    if (!user) throw notFound('User with that email');
    const inserted = await transaction(this.db, async (tx) => {
      const [already] = await tx
        .select({ id: memberships.id })
        .from(memberships)
        .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, user.id)));
      if (already) return [];
      await this.plans?.assertRoom(tx, orgId, 'members');
      return tx
        .insert(memberships)
        .values({ id: newId('membership'), orgId, userId: user.id, role })
        .onConflictDoNothing()
        .returning();
    });
    if (inserted.length === 0) throw conflict('That user is already a member of this organization');
    const m = inserted[0]!;
    return { id: m.id, userId: user.id, email: user.email, name: user.name, role: m.role, createdAt: m.createdAt };
  }

  /**
   * Changes a member's role (CONTRACT §2). Only an owner makes an owner or changes an owner; the
   * last owner cannot be demoted (409). The organization's owner rows are locked while deciding, so
   * two demotions at once cannot leave it without one.
   */
  async updateMemberRole(orgId: string, userId: string, role: Role, actorRole: Role | null) {
    await transaction(this.db, async (tx) => {
      const target = await this.lockForChange(tx, orgId, userId, actorRole, role === 'owner');
      if (target.role === 'owner' && role !== 'owner') await this.assertNotLastOwner(tx, orgId, 'demoted');
      await tx
        .update(memberships)
        .set({ role })
        .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)));
    });
    const member = (await this.listMembers(orgId)).find((m) => m.userId === userId);
    if (!member) throw notFound('Member');
    return member;
  }

  /** Removes a member; the last owner cannot be removed (409). Their sessions no longer reach the organization. */
  async removeMember(orgId: string, userId: string, actorRole: Role | null): Promise<void> {
    await transaction(this.db, async (tx) => {
      const target = await this.lockForChange(tx, orgId, userId, actorRole, false);
      if (target.role === 'owner') await this.assertNotLastOwner(tx, orgId, 'removed');
      await tx.delete(memberships).where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)));
    });
  }

  /** Locks the organization's owners and the target membership; 404 if not a member, 403 when an admin touches an owner. */
  private async lockForChange(tx: Db, orgId: string, userId: string, actorRole: Role | null, makesOwner: boolean) {
    await tx
      .select({ id: memberships.id })
      .from(memberships)
      .where(and(eq(memberships.orgId, orgId), eq(memberships.role, 'owner')))
      .for('update');
    const [target] = await tx
      .select()
      .from(memberships)
      .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)))
      .for('update');
    if (!target) throw notFound('Member');
    if ((target.role === 'owner' || makesOwner) && actorRole !== 'owner') throw forbidden('Only an owner can change or remove an owner, or make one');
    return target;
  }

  private async assertNotLastOwner(tx: Db, orgId: string, what: string): Promise<void> {
    const owners = await tx
      .select({ id: memberships.id })
      .from(memberships)
      .where(and(eq(memberships.orgId, orgId), eq(memberships.role, 'owner')));
    if (owners.length <= 1) throw conflict(`The last owner cannot be ${what}; make another member an owner first`);
  }

  /** Makes a user a member in the caller's transaction; false when they already were (their role is kept). */
  async addMembership(tx: Db, orgId: string, userId: string, role: Role): Promise<boolean> {
    const [already] = await tx
      .select({ id: memberships.id })
      .from(memberships)
      .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)));
    if (already) return false;
    await this.plans?.assertRoom(tx, orgId, 'members');
    const inserted = await tx
      .insert(memberships)
      .values({ id: newId('membership'), orgId, userId, role })
      .onConflictDoNothing()
      .returning({ id: memberships.id });
    return inserted.length > 0;
  }

  /** The owners of an organization, for notifications addressed to them. */
  async ownerIds(orgId: string): Promise<string[]> {
    const rows = await this.db
      .select({ userId: memberships.userId })
      .from(memberships)
      .where(and(eq(memberships.orgId, orgId), eq(memberships.role, 'owner')));
    return rows.map((r) => r.userId);
  }

  countUsers(): Promise<number> {
    return countUsers(this.db);
  }
}
