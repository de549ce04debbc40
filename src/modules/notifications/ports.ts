import type { Db } from '../../platform/db.ts';
import type { OrgMessage } from '../events/index.ts';

/** What the notifications module uses of others, handed in by services.ts. */

/** The events module's organization stream: a notification is pushed to the organization's panels. */
export interface OrgStreamPort {
  publish(orgId: string, message: OrgMessage): Promise<void>;
  /** Sent when the caller's transaction commits. */
  publishInTx(tx: Db, orgId: string, message: OrgMessage): Promise<void>;
}

export interface NotificationsPorts {
  orgStream: OrgStreamPort;
}
