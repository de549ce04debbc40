import type { Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import type { CampaignPorts } from './ports.ts';

/** What the parts of the campaigns module (the CRUD in service.ts, suppressions, runner, outcomes) share. */
export interface CampaignsContext {
  readonly db: Db;
  readonly clock: Clock;
  readonly ports: CampaignPorts;
}
