/** What the stats module needs of others, handed in by services.ts. */

/** The orgs module: the project a query may read (an API key bound to a project reads only it; 404 for another organization's). */
export interface StatsOrgsPort {
  projectFor(scope: { orgId: string; projectId: string | null }, requested: string | null | undefined): Promise<string | null>;
}

/** StatsService: the orgs module. */
export interface StatsPorts {
  orgs: StatsOrgsPort;
}
