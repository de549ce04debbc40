/** A lead's status values (SPEC "Lead"), for the server's checks and the panel's pickers alike. */
export const LEAD_STATUSES = ['NEW', 'CONTACTED', 'ENGAGED', 'QUALIFIED', 'UNQUALIFIED', 'CUSTOMER', 'LOST'] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];
