import { sql, type SQL } from 'drizzle-orm';
import { contacts } from './tables.ts';

/** The address of a lead's newest contact on an inbox (a Telegram chat id), as an expression over `leadId`. */
export function contactAddressOfLead(inboxId: string, leadId: SQL): SQL {
  return sql`(select c.address from ${contacts} c where c.inbox_id = ${inboxId} and c.lead_id = ${leadId} order by c.created_at desc limit 1)`;
}
