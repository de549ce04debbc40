/** A post's status values and what each allows (CONTRACT §6), for the server's checks and the panel's buttons alike. */
export const POST_STATUSES = ['DRAFT', 'APPROVED', 'SCHEDULED', 'PUBLISHING', 'PUBLISHED', 'FAILED'] as const;
export type PostStatus = (typeof POST_STATUSES)[number];

/**
 * Which status allows what. A post is approved from DRAFT (or again after a FAILED publish);
 * approval makes it SCHEDULED (future scheduledAt), PUBLISHING (an integration and no future time)
 * or APPROVED (no integration yet). Only the publisher moves PUBLISHING to PUBLISHED or FAILED.
 * Editing the text of an approved, scheduled or failed post sends it back to DRAFT.
 */
export const CAN = {
  edit: ['DRAFT', 'APPROVED', 'SCHEDULED', 'FAILED'],
  approve: ['DRAFT', 'FAILED'],
  publish: ['APPROVED', 'SCHEDULED', 'FAILED'],
  delete: ['DRAFT', 'APPROVED', 'SCHEDULED', 'PUBLISHED', 'FAILED'],
} as const satisfies Record<string, readonly PostStatus[]>;

export function allowed(action: keyof typeof CAN, status: string): boolean {
  return (CAN[action] as readonly string[]).includes(status);
}
