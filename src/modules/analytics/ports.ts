import type { Db } from '../../platform/db.ts';
import type { EventsService } from '../events/service.ts';
import type { IntegrationsService } from '../integrations/service.ts';
import type { NotificationsService } from '../notifications/service.ts';
import type { OrgsService } from '../orgs/service.ts';
import type { Bus } from '../../platform/bus.ts';

/** An integration row as the integrations module hands it out (credentials sealed). */
export type IntegrationRow = NonNullable<Awaited<ReturnType<IntegrationsService['row']>>>;

/** What analytics needs of the integrations module: the row, a fresh access token, and "reconnect it". */
export type IntegrationsPort = Pick<IntegrationsService, 'row' | 'freshCredentials' | 'requireReauth'>;

/** The narrow ports of the analytics module, handed in by services.ts. */
export interface AnalyticsPorts {
  bus: Pick<Bus, 'publishInTx'>;
  events: Pick<EventsService, 'record'>;
  notifications: Pick<NotificationsService, 'notify'>;
  orgs: Pick<OrgsService, 'projectFor'>;
  integrations: IntegrationsPort;
}

export type { Db };
