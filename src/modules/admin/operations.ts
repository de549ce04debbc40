import { eq, or } from 'drizzle-orm';
import { AppError } from '../../platform/errors.ts';
import { assertAcceptablePassword } from '../auth/passwords.ts';
import type { Services } from '../../services.ts';
import { organizations } from '../orgs/tables.ts';

/**
 * The bootstrap commands of the CLI. The CLI runs them itself when it can open the database, and
 * asks the running server to run them (admin routes) when the server holds the embedded database.
 */

export interface CreateOwnerInput { email: string; password: string; name?: string; organizationName: string }
export interface CreateOwnerResult { user: { id: string; email: string }; organization: { id: string; name: string } }

export async function createOwner(services: Services, input: CreateOwnerInput): Promise<CreateOwnerResult> {
  assertAcceptablePassword(input.password);
  const { user, organization } = await services.auth.createUserWithOrg(input);
  return { user: { id: user.id, email: user.email }, organization: { id: organization.id, name: organization.name } };
}

export interface CreateApiKeyInput { org: string; name: string; scopes: string[]; projectId?: string }
export interface CreateApiKeyResult { id: string; key: string; scopes: string[]; organization: { id: string; name: string } }

export async function createApiKey(services: Services, input: CreateApiKeyInput): Promise<CreateApiKeyResult> {
  const { apiKeys, orgs, db } = services;
  const found = await db.select().from(organizations).where(or(eq(organizations.id, input.org), eq(organizations.name, input.org)));
  if (found.length === 0) throw new AppError(404, 'NOT_FOUND', `No organization with id or name "${input.org}"`);
  if (found.length > 1) throw new AppError(409, 'CONFLICT', `Several organizations are named "${input.org}"; pass the id`);
  const org = found[0]!;
  if (input.projectId) await orgs.assertProject(org.id, input.projectId);
  const key = await apiKeys.create(org.id, { name: input.name, scopes: input.scopes, projectId: input.projectId });
  return { id: key.id, key: key.key, scopes: key.scopes, organization: { id: org.id, name: org.name } };
}
