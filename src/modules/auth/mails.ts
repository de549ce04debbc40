import { escapeHtml, type MailMessage } from '../../platform/mail.ts';

/** The password-reset e-mail: the link, how long it lasts, and what to do if it was not asked for. */
export function passwordResetMail(input: { to: string; link: string; publicUrl: string }): MailMessage {
  const site = new URL(input.publicUrl).host;
  const text = [
    `Someone asked to reset the password of the account ${input.to} on ${site}.`,
    '',
    'To choose a new password, open this link within one hour (it works once):',
    input.link,
    '',
    'If you did not ask for this, ignore this message: your password stays as it is.',
  ].join('\n');
  const html = [
    `<p>Someone asked to reset the password of the account ${escapeHtml(input.to)} on ${escapeHtml(site)}.</p>`,
    `<p><a href="${escapeHtml(input.link)}">Choose a new password</a> within one hour (the link works once).</p>`,
    '<p>If you did not ask for this, ignore this message: your password stays as it is.</p>',
  ].join('\n');
  return { to: input.to, subject: `Reset your password on ${site}`, text, html };
}
