import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db.ts';
import type { Scope } from '../../platform/context.ts';
import { newId } from '../../platform/ids.ts';
import type { ContactRow, InboxRow } from './context.ts';
import type { LeadsPort } from './ports.ts';
import { contacts } from './tables.ts';

/** Contacts: the people an inbox talks with, one per (inbox, address), and the lead each stands for. */

export const isEmail = (s: string) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s);
export const isPhone = (s: string) => /^\+?[0-9 ().-]{6,20}$/.test(s) && /\d{6,}/.test(s.replace(/\D/g, ''));

export async function contactRow(db: Db, inboxId: string, address: string): Promise<ContactRow | undefined> {
  const [row] = await db
    .select()
    .from(contacts)
    .where(and(eq(contacts.inboxId, inboxId), eq(contacts.address, address)));
  return row;
}

/** The contact of the inbox with that address, made or updated: a name given replaces none, a lead is kept once linked. */
export async function upsertContact(tx: Db, inbox: InboxRow, address: string, name: string | null, leadId: string | null): Promise<ContactRow> {
  const [row] = await tx
    .insert(contacts)
    .values({ id: newId('contact'), orgId: inbox.orgId, projectId: inbox.projectId, inboxId: inbox.id, address, name, leadId })
    .onConflictDoUpdate({
      target: [contacts.inboxId, contacts.address],
      set: { name: sql`coalesce(excluded.name, ${contacts.name})`, leadId: sql`coalesce(${contacts.leadId}, excluded.lead_id)` },
    })
    .returning();
  return row!;
}

/** The lead a contact address stands for: matched by e-mail or phone, or created with source = channel. */
export async function leadFor(
  leads: LeadsPort,
  scope: Scope,
  inbox: InboxRow,
  address: string,
  name: string | undefined,
  created?: Set<string>,
): Promise<string | null> {
  const keys = isEmail(address) ? { email: address } : isPhone(address) ? { phone: address } : null;
  if (!keys) return null;
  try {
    const found = await leads.findOrCreate(
      { ...scope, projectId: inbox.projectId },
      { projectId: inbox.projectId, ...keys, ...(name ? { name } : {}), source: inbox.channel },
    );
    if (found.created) created?.add(found.lead.id);
    return found.lead.id;
  } catch {
    // An address the leads module refuses (an impossible phone number) stays a contact.
    return null;
  }
}
