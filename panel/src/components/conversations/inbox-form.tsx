import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { ApiError } from '../../api/client';
import { projectsQuery } from '../../queries/settings';
import { Button } from '../ui/button';
import { Checkbox, SelectField, TextField } from '../ui/field';
import { FormError } from '../ui/states';
import { CHANNELS, channelLabel, type ChannelName, type Inbox } from './model';

export interface FaqEntry {
  question: string;
  answer: string;
}

/** What the inbox form edits; the config and credentials fields that matter depend on the channel. */
export interface InboxFields {
  name: string;
  channel: ChannelName;
  projectId: string;
  url: string;
  phoneNumberId: string;
  accessToken: string;
  appSecret: string;
  botToken: string;
  address: string;
  fromName: string;
  allowedOrigins: string;
  botEnabled: boolean;
  faq: FaqEntry[];
}

export const EMPTY_INBOX: InboxFields = {
  name: '',
  channel: 'api',
  projectId: '',
  url: '',
  phoneNumberId: '',
  accessToken: '',
  appSecret: '',
  botToken: '',
  address: '',
  fromName: '',
  allowedOrigins: '',
  botEnabled: false,
  faq: [],
};

const text = (value: unknown) => (typeof value === 'string' ? value : '');

/** The form's fields for an existing inbox (credentials are never returned: left empty, kept unless typed). */
export function fieldsOf(inbox: Inbox): InboxFields {
  const config = inbox.config as Record<string, unknown>;
  const faq = Array.isArray(config.faq) ? (config.faq as FaqEntry[]).map((f) => ({ question: text(f.question), answer: text(f.answer) })) : [];
  const origins = Array.isArray(config.allowedOrigins) ? (config.allowedOrigins as unknown[]).map(text).join('\n') : '';
  return {
    ...EMPTY_INBOX,
    name: inbox.name,
    channel: (CHANNELS as readonly string[]).includes(inbox.channel) ? (inbox.channel as ChannelName) : 'api',
    projectId: inbox.projectId,
    url: text(config.url),
    phoneNumberId: text(config.phoneNumberId),
    address: text(config.address),
    fromName: text(config.fromName),
    allowedOrigins: origins,
    botEnabled: inbox.bot.enabled,
    faq,
  };
}

/** The channel's config of CONTRACT §8 (and every channel's FAQ for the offline bot). */
export function configOf(f: InboxFields): Record<string, unknown> {
  const faq = f.faq.map((e) => ({ question: e.question.trim(), answer: e.answer.trim() })).filter((e) => e.question && e.answer);
  const base: Record<string, unknown> = { faq };
  switch (f.channel) {
    case 'api':
      return { ...base, url: f.url.trim() };
    case 'whatsapp':
      return { ...base, phoneNumberId: f.phoneNumberId.trim() };
    case 'email':
      return { ...base, address: f.address.trim(), ...(f.fromName.trim() ? { fromName: f.fromName.trim() } : {}) };
    case 'web':
      return {
        ...base,
        allowedOrigins: f.allowedOrigins
          .split(/[\s,]+/)
          .map((o) => o.trim())
          .filter(Boolean),
      };
    default:
      return base;
  }
}

/** The credentials typed in (none: the stored ones stay). */
export function credentialsOf(f: InboxFields): Record<string, string> | undefined {
  const pick = (entries: [string, string][]) => {
    const filled = entries.filter(([, v]) => v.trim() !== '');
    return filled.length ? Object.fromEntries(filled.map(([k, v]) => [k, v.trim()])) : undefined;
  };
  if (f.channel === 'whatsapp')
    return pick([
      ['accessToken', f.accessToken],
      ['appSecret', f.appSecret],
    ]);
  if (f.channel === 'telegram') return pick([['botToken', f.botToken]]);
  return undefined;
}

export function InboxForm({
  orgId,
  mode,
  initial,
  error,
  pending,
  submitLabel,
  onSubmit,
  onCancel,
}: {
  orgId: string;
  mode: 'create' | 'edit';
  initial: InboxFields;
  error: unknown;
  pending: boolean;
  submitLabel: string;
  onSubmit: (fields: InboxFields) => void;
  onCancel: () => void;
}) {
  const [f, setF] = useState(initial);
  const projects = useQuery(projectsQuery(orgId));
  const set = <K extends keyof InboxFields>(key: K, value: InboxFields[K]) => setF((prev) => ({ ...prev, [key]: value }));
  const fieldErrors = error instanceof ApiError ? error.fieldErrors : {};
  const err = (name: string) => fieldErrors[name] ?? fieldErrors[`config.${name}`] ?? fieldErrors[`credentials.${name}`] ?? fieldErrors[`config/${name}`];
  const keep = mode === 'edit' ? 'Leave empty to keep the stored one.' : undefined;
  const setFaq = (i: number, entry: Partial<FaqEntry>) =>
    set(
      'faq',
      f.faq.map((e, j) => (j === i ? { ...e, ...entry } : e)),
    );

  return (
    <form
      className="space-y-4"
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit(f);
      }}
    >
      <div className="grid gap-4 sm:grid-cols-2">
        <TextField
          label="Name"
          value={f.name}
          required
          maxLength={200}
          onChange={(e) => set('name', e.target.value)}
          error={err('name')}
          placeholder="Support"
        />
        {mode === 'create' ? (
          <SelectField
            label="Channel"
            value={f.channel}
            onChange={(e) => set('channel', e.target.value as ChannelName)}
            options={CHANNELS.map((c) => ({ value: c, label: channelLabel(c) }))}
            error={err('channel')}
          />
        ) : (
          <div className="space-y-1">
            <p className="text-sm font-medium text-slate-700">Channel</p>
            <p className="py-2 text-sm">{channelLabel(f.channel)}</p>
          </div>
        )}
      </div>
      {mode === 'create' && (projects.data?.length ?? 0) > 1 ? (
        <SelectField
          label="Project"
          value={f.projectId}
          onChange={(e) => set('projectId', e.target.value)}
          options={[{ value: '', label: 'The default project' }, ...(projects.data ?? []).map((p) => ({ value: p.id, label: p.name }))]}
        />
      ) : null}

      <fieldset className="space-y-3 rounded-md border border-slate-200 p-3">
        <legend className="px-1 text-sm font-medium text-slate-700">{channelLabel(f.channel)} settings</legend>
        {f.channel === 'api' ? (
          <TextField
            label="Delivery URL"
            type="url"
            required
            value={f.url}
            maxLength={2048}
            onChange={(e) => set('url', e.target.value)}
            error={err('url')}
            placeholder="https://your-system.example/messages"
            hint="Replies are delivered here as signed webhooks; your system posts inbound messages to the inbox's inbound URL with an API key."
          />
        ) : null}
        {f.channel === 'whatsapp' ? (
          <>
            <TextField
              label="Phone number ID"
              required
              value={f.phoneNumberId}
              maxLength={100}
              onChange={(e) => set('phoneNumberId', e.target.value)}
              error={err('phoneNumberId')}
              hint="From the WhatsApp Cloud API's app settings."
            />
            <TextField
              label="Access token"
              type="password"
              autoComplete="off"
              required={mode === 'create'}
              value={f.accessToken}
              maxLength={4096}
              onChange={(e) => set('accessToken', e.target.value)}
              error={err('accessToken')}
              hint={keep ?? 'Encrypted at rest, never shown again.'}
            />
            <TextField
              label="App secret"
              type="password"
              autoComplete="off"
              required={mode === 'create'}
              value={f.appSecret}
              maxLength={4096}
              onChange={(e) => set('appSecret', e.target.value)}
              error={err('appSecret')}
              hint={keep ?? 'Verifies the signature of inbound messages.'}
            />
          </>
        ) : null}
        {f.channel === 'telegram' ? (
          <TextField
            label="Bot token"
            type="password"
            autoComplete="off"
            required={mode === 'create'}
            value={f.botToken}
            maxLength={4096}
            onChange={(e) => set('botToken', e.target.value)}
            error={err('botToken')}
            hint={keep ?? 'From @BotFather; the service registers its webhook with Telegram.'}
          />
        ) : null}
        {f.channel === 'email' ? (
          <div className="grid gap-3 sm:grid-cols-2">
            <TextField
              label="Address"
              type="email"
              required
              value={f.address}
              maxLength={320}
              onChange={(e) => set('address', e.target.value)}
              error={err('address')}
              placeholder="support@example.com"
            />
            <TextField
              label="From name"
              value={f.fromName}
              maxLength={200}
              onChange={(e) => set('fromName', e.target.value)}
              error={err('fromName')}
              placeholder="Acme Support"
            />
          </div>
        ) : null}
        {f.channel === 'web' ? (
          <TextField
            label="Allowed origins"
            required
            value={f.allowedOrigins}
            maxLength={15000}
            onChange={(e) => set('allowedOrigins', e.target.value)}
            error={err('allowedOrigins')}
            placeholder="https://www.example.com https://shop.example.com"
            hint="The sites that may embed the chat widget, separated by spaces or commas."
          />
        ) : null}
      </fieldset>

      <fieldset className="space-y-3 rounded-md border border-slate-200 p-3">
        <legend className="px-1 text-sm font-medium text-slate-700">Bot</legend>
        <Checkbox label="The bot answers new conversations" checked={f.botEnabled} onChange={(e) => set('botEnabled', e.target.checked)} />
        <p className="text-xs text-slate-500">It answers from these questions and hands off to a person when it has no answer or the contact asks for one.</p>
        <ol aria-label="FAQ entries" className="space-y-3">
          {f.faq.map((entry, i) => (
            <li key={i} className="space-y-2 rounded-md bg-slate-50 p-2">
              <TextField label={`Question ${i + 1}`} value={entry.question} maxLength={500} onChange={(e) => setFaq(i, { question: e.target.value })} />
              <TextField label={`Answer ${i + 1}`} value={entry.answer} maxLength={4000} onChange={(e) => setFaq(i, { answer: e.target.value })} />
              <Button
                size="sm"
                variant="ghost"
                onClick={() =>
                  set(
                    'faq',
                    f.faq.filter((_, j) => j !== i),
                  )
                }
                aria-label={`Remove FAQ entry ${i + 1}`}
              >
                Remove
              </Button>
            </li>
          ))}
        </ol>
        {f.faq.length < 200 ? (
          <Button size="sm" onClick={() => set('faq', [...f.faq, { question: '', answer: '' }])}>
            Add FAQ entry
          </Button>
        ) : null}
      </fieldset>

      <FormError error={error} />
      <div className="flex justify-end gap-2">
        <Button onClick={onCancel}>Cancel</Button>
        <Button type="submit" variant="primary" disabled={pending}>
          {submitLabel}
        </Button>
      </div>
    </form>
  );
}
