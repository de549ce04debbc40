import { escapeHtml, type MailMessage } from '../../platform/mail.ts';

/** The invitation e-mail: who invites, to which organization, with which role, and the link. */
export function invitationMail(input: {
  to: string;
  url: string;
  organizationName: string;
  role: string;
  inviter: string | null;
  expiresAt: Date;
  publicUrl: string;
}): MailMessage {
  const site = new URL(input.publicUrl).host;
  const who = input.inviter ?? 'Someone';
  const until = input.expiresAt.toISOString().slice(0, 16).replace('T', ' ');
  const text = [
    `${who} invited you to join "${input.organizationName}" on ${site} as ${input.role}.`,
    '',
    'To accept, open this link (it works once, until ' + until + ' UTC):',
    input.url,
    '',
    'If you do not know this organization, ignore this message.',
  ].join('\n');
  const html = [
    `<p>${escapeHtml(who)} invited you to join <strong>${escapeHtml(input.organizationName)}</strong> on ${escapeHtml(site)} as ${escapeHtml(input.role)}.</p>`,
    `<p><a href="${escapeHtml(input.url)}">Accept the invitation</a> (the link works once, until ${escapeHtml(until)} UTC).</p>`,
    '<p>If you do not know this organization, ignore this message.</p>',
  ].join('\n');
  return { to: input.to, subject: `${who} invited you to ${input.organizationName}`, text, html };
}
