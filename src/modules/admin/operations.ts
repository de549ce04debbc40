import { AppError } from '../../platform/errors.ts';
import type { ApiKeysService } from '../api-keys/service.ts';
import { assertAcceptablePassword } from '../auth/passwords.ts';
import type { AuthService } from '../auth/service.ts';
import type { OrgsService } from '../orgs/service.ts';

/**
 * The bootstrap commands of the CLI. The CLI runs them itself when it can open the database, and
 * asks the running server to run them (admin routes) when the server holds the embedded database.
 */

/** What the commands use; the CLI and the admin routes pass the real services. */
export interface AdminPorts {
  auth: Pick<AuthService, 'createUserWithOrg'>;
  orgs: Pick<OrgsService, 'findByIdOrName' | 'assertProject'>;
  apiKeys: Pick<ApiKeysService, 'create'>;
}

export interface CreateOwnerInput { email: string; password: string; name?: string; organizationName: string }
export interface CreateOwnerResult { user: { id: string; email: string }; organization: { id: string; name: string } }

export async function createOwner(services: Pick<AdminPorts, 'auth'>, input: CreateOwnerInput): Promise<CreateOwnerResult> {
  assertAcceptablePassword(input.password);
  const { user, organization } = await services.auth.createUserWithOrg(input);
  return { user: { id: user.id, email: user.email }, organization: { id: organization.id, name: organization.name } };
}

export interface CreateApiKeyInput { org: string; name: string; scopes: string[]; projectId?: string }
export interface CreateApiKeyResult { id: string; key: string; scopes: string[]; organization: { id: string; name: string } }

export async function createApiKey(services: Pick<AdminPorts, 'orgs' | 'apiKeys'>, input: CreateApiKeyInput): Promise<CreateApiKeyResult> {
  const { apiKeys, orgs } = services;
  const found = await orgs.findByIdOrName(input.org);
  if (found.length === 0) throw new AppError(404, 'NOT_FOUND', `No organization with id or name "${input.org}"`);
  if (found.length > 1) throw new AppError(409, 'CONFLICT', `Several organizations are named "${input.org}"; pass the id`);
  const org = found[0]!;
  if (input.projectId) await orgs.assertProject(org.id, input.projectId);
  const key = await apiKeys.create(org.id, { name: input.name, scopes: input.scopes, projectId: input.projectId });
  return { id: key.id, key: key.key, scopes: key.scopes, organization: { id: org.id, name: org.name } };
}
