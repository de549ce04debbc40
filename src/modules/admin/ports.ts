/**
 * What the admin module's bootstrap commands use of other modules, as interfaces: the CLI and the
 * admin routes pass the real services (structural typing does the rest).
 */

/** The auth module: the first owner and their organization. */
export interface AuthPort {
  /** A user with their own organization (the first owner, the CLI, signup); the password is checked (400). */
  createUserWithOrg(input: {
    email: string;
    password: string;
    name?: string;
    organizationName?: string;
  }): Promise<{ user: { id: string; email: string }; organization: { id: string; name: string } }>;
}

/** The orgs module: an organization named by the CLI, and its projects. */
export interface OrgsPort {
  /** The organizations whose id or name is `idOrName` (the CLI names them either way; names are not unique). */
  findByIdOrName(idOrName: string): Promise<{ id: string; name: string }[]>;
  /** 404 unless the project belongs to the organization (a project never changes organization). */
  assertProject(orgId: string, projectId: string): Promise<void>;
}

/** The api-keys module: a new key, returned once. */
export interface ApiKeysPort {
  /** The key itself is returned once, here; only its SHA-256 is stored. */
  create(orgId: string, input: { name: string; scopes: string[]; projectId?: string | null }): Promise<{ id: string; key: string; scopes: string[] }>;
}

/** The plans module: an organization's plan set (CONTRACT §12); an unknown plan is refused with the list. */
export interface PlansPort {
  setPlan(orgId: string, plan: string): Promise<{ organization: { id: string; name: string }; plan: string }>;
}

/** What the commands use; the CLI and the admin routes pass the real services. */
export interface AdminPorts {
  auth: AuthPort;
  orgs: OrgsPort;
  apiKeys: ApiKeysPort;
  plans: PlansPort;
}
