import { AppError } from '../../platform/errors.ts';
import { assertAcceptablePassword } from '../auth/index.ts';
import type { AdminPorts } from './ports.ts';

/**
 * The bootstrap commands of the CLI. The CLI runs them itself when it can open the database, and
 * asks the running server to run them (admin routes) when the server holds the embedded database.
 */

export interface CreateOwnerInput {
  email: string;
  password: string;
  name?: string;
  organizationName: string;
}
export interface CreateOwnerResult {
  user: { id: string; email: string };
  organization: { id: string; name: string };
}

export async function createOwner(services: Pick<AdminPorts, 'auth'>, input: CreateOwnerInput): Promise<CreateOwnerResult> {
  assertAcceptablePassword(input.password);
  const { user, organization } = await services.auth.createUserWithOrg(input);
  return { user: { id: user.id, email: user.email }, organization: { id: organization.id, name: organization.name } };
}

export interface CreateApiKeyInput {
  org: string;
  name: string;
  scopes: string[];
  projectId?: string;
}
export interface CreateApiKeyResult {
  id: string;
  key: string;
  scopes: string[];
  organization: { id: string; name: string };
}

/** The one organization an id or exact name names (404 none, 409 several of that name). */
async function oneOrg(orgs: AdminPorts['orgs'], idOrName: string) {
  const found = await orgs.findByIdOrName(idOrName);
  if (found.length === 0) throw new AppError(404, 'NOT_FOUND', `No organization with id or name "${idOrName}"`);
  if (found.length > 1) throw new AppError(409, 'CONFLICT', `Several organizations are named "${idOrName}"; pass the id`);
  return found[0]!;
}

export interface SetPlanInput {
  org: string;
  plan: string;
}
export interface SetPlanResult {
  organization: { id: string; name: string };
  plan: string;
}

/** Assigns a plan of PLANS to an organization (CONTRACT §12); an unknown plan is refused with the list. */
export async function setPlan(services: Pick<AdminPorts, 'orgs' | 'plans'>, input: SetPlanInput): Promise<SetPlanResult> {
  const org = await oneOrg(services.orgs, input.org);
  return services.plans.setPlan(org.id, input.plan);
}

export async function createApiKey(services: Pick<AdminPorts, 'orgs' | 'apiKeys'>, input: CreateApiKeyInput): Promise<CreateApiKeyResult> {
  const { apiKeys, orgs } = services;
  const org = await oneOrg(orgs, input.org);
  if (input.projectId) await orgs.assertProject(org.id, input.projectId);
  const key = await apiKeys.create(org.id, { name: input.name, scopes: input.scopes, projectId: input.projectId });
  return { id: key.id, key: key.key, scopes: key.scopes, organization: { id: org.id, name: org.name } };
}
