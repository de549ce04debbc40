import { useEffect, useId, useState, type FormEvent, type ReactNode } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { ApiError } from '../../api/client';
import { audienceQuery } from '../../queries/leads';
import { LEAD_STATUSES } from '../../../../src/shared/leads.ts';
import { Checkbox, SelectField, TextArea, TextField } from '../ui/field';
import { Button } from '../ui/button';
import { FormError } from '../ui/states';
import { channelLabel } from '../conversations/model';
import { audienceFilter, describeDelay, delayOf, editorErrors, emptyStep, leadIdsOf, WEEKDAYS, type CampaignFields, type StepFields } from './form';
import { statusLabel, type Campaign } from './model';
import { sendingInboxesQuery } from '../../queries/campaigns';

const MAX_STEPS = 20;

/** A value that settles a moment after typing stops (the audience preview is one request per pause, not per key). */
function useSettled<T>(value: T, ms = 300): T {
  const key = JSON.stringify(value);
  const [settled, setSettled] = useState(key);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(key), ms);
    return () => clearTimeout(timer);
  }, [key, ms]);
  return JSON.parse(settled) as T;
}

function timeZones(current: string): string[] {
  const zones = Intl.supportedValuesOf('timeZone');
  return zones.includes(current) ? zones : [current, ...zones];
}

function Section({ title, description, children }: { title: string; description?: ReactNode; children: ReactNode }) {
  const id = useId();
  return (
    <section aria-labelledby={id} className="space-y-4 rounded-lg bg-white p-5 shadow-xs ring-1 ring-slate-200">
      <div>
        <h2 id={id} className="text-base font-semibold text-slate-900">
          {title}
        </h2>
        {description ? <p className="mt-0.5 text-sm text-slate-600">{description}</p> : null}
      </div>
      {children}
    </section>
  );
}

/**
 * The campaign editor (create, and edit while DRAFT, SCHEDULED or PAUSED): the API's field errors
 * under the fields they name, its message (400, 409, 422) beside the buttons.
 */
export function CampaignForm({
  orgId,
  initial,
  campaign,
  error,
  pending,
  submitLabel,
  onSubmit,
  onCancel,
}: {
  orgId: string;
  initial: CampaignFields;
  /** The stored campaign when editing. */
  campaign?: Campaign;
  error: unknown;
  pending: boolean;
  submitLabel: string;
  onSubmit: (fields: CampaignFields, channel: string | undefined) => void;
  onCancel: () => void;
}) {
  const [fields, setFields] = useState(initial);
  const set = (patch: Partial<CampaignFields>) => setFields((f) => ({ ...f, ...patch }));
  const setStep = (index: number, patch: Partial<StepFields>) =>
    setFields((f) => ({ ...f, steps: f.steps.map((s, i) => (i === index ? { ...s, ...patch } : s)) }));
  const inboxes = useQuery(sendingInboxesQuery(orgId));
  const inbox = inboxes.data?.find((i) => i.id === fields.inboxId);
  const channel = inbox?.channel ?? campaign?.channel;
  // Started: the audience was resolved and the inbox is kept (the API refuses to change either).
  const started = Boolean(campaign?.startedAt);
  const errors = error instanceof ApiError ? editorErrors(error.fieldErrors) : {};
  const errorOf = (prefix: string) => Object.entries(errors).find(([field]) => field === prefix || field.startsWith(`${prefix}.`))?.[1];

  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit(fields, channel);
  };

  return (
    <form className="space-y-5" onSubmit={submit} aria-label="Campaign">
      <Section title="Campaign">
        <div className="grid grid-cols-1 gap-4 md:grid-cols-2">
          <TextField
            label="Name"
            required
            maxLength={200}
            value={fields.name}
            onChange={(e) => set({ name: e.target.value })}
            error={errorOf('name')}
            placeholder="Spring welcome"
          />
          <SelectField
            label="Inbox"
            required
            disabled={started}
            value={fields.inboxId}
            onChange={(e) => set({ inboxId: e.target.value })}
            error={errorOf('inboxId')}
            hint={
              started
                ? 'A started campaign keeps its inbox.'
                : inboxes.data?.length === 0
                  ? 'No e-mail, WhatsApp or Telegram inbox yet: add one in Settings → Inboxes.'
                  : 'Messages go out through this inbox; replies arrive in Conversations.'
            }
            options={[
              { value: '', label: inboxes.isPending ? 'Loading inboxes…' : 'Choose an inbox' },
              ...(inboxes.data ?? []).map((i) => ({ value: i.id, label: `${i.name} (${channelLabel(i.channel)})` })),
            ]}
          />
        </div>
      </Section>

      <Audience orgId={orgId} fields={fields} set={set} projectId={inbox?.projectId ?? campaign?.projectId} disabled={started} error={errorOf('audience')} />

      <Section title="Steps" description="Each step waits after the one before it (the first after the start). No step is sent twice to a lead.">
        <ol className="space-y-4">
          {fields.steps.map((step, index) => (
            <li key={index}>
              <fieldset className="space-y-3 rounded-md border border-slate-200 p-4">
                <legend className="px-1 text-sm font-semibold text-slate-800">Step {index + 1}</legend>
                <div className="flex flex-wrap items-end gap-3">
                  <span className="pb-2 text-sm text-slate-700">{index === 0 ? 'Wait after the start' : `Wait after step ${index}`}</span>
                  {(['days', 'hours', 'minutes'] as const).map((unit) => (
                    <div key={unit} className="w-24">
                      <TextField
                        label={unit.charAt(0).toUpperCase() + unit.slice(1)}
                        type="number"
                        min={0}
                        max={unit === 'days' ? 365 : unit === 'hours' ? 23 : 59}
                        value={step[unit]}
                        onChange={(e) => setStep(index, { [unit]: e.target.value })}
                      />
                    </div>
                  ))}
                  <span className="pb-2 text-xs text-slate-500">Sent {describeDelay(delayOf(step))}</span>
                  <Button
                    size="sm"
                    variant="ghost"
                    className="mb-1.5 ml-auto"
                    disabled={fields.steps.length === 1}
                    aria-label={`Remove step ${index + 1}`}
                    onClick={() => set({ steps: fields.steps.filter((_, i) => i !== index) })}
                  >
                    Remove
                  </Button>
                </div>
                {errorOf(`steps.${index}.delaySeconds`) ? <p className="text-xs text-red-600">{errorOf(`steps.${index}.delaySeconds`)}</p> : null}
                {channel === 'email' ? (
                  <TextField
                    label="Subject"
                    maxLength={500}
                    required={index === 0}
                    value={step.subject}
                    onChange={(e) => setStep(index, { subject: e.target.value })}
                    error={errorOf(`steps.${index}.subject`)}
                    placeholder={index === 0 ? 'Hello {{ lead.name }}' : "Follow-ups answer in the first step's thread"}
                    hint={index === 0 ? undefined : "Optional: follow-ups are sent as replies in the first message's thread."}
                  />
                ) : null}
                {step.template ? (
                  <p className="text-xs text-slate-600">
                    Sends the WhatsApp template <span className="font-mono">{step.template.name}</span> ({step.template.language}); the text is the fallback
                    shown in Conversations.
                  </p>
                ) : null}
                <TextArea
                  label="Message"
                  required
                  rows={4}
                  maxLength={8000}
                  value={step.text}
                  onChange={(e) => setStep(index, { text: e.target.value })}
                  error={errorOf(`steps.${index}.text`)}
                  hint={
                    <>
                      Write <code className="rounded bg-slate-100 px-1">{'{{ lead.name }}'}</code> to personalise: anything in{' '}
                      <code className="rounded bg-slate-100 px-1">{'{{ }}'}</code> is read from the lead (e.g.{' '}
                      <code className="rounded bg-slate-100 px-1">{'{{ lead.company }}'}</code>).
                      {channel === 'email' ? ' An unsubscribe link is added to every e-mail.' : ''}
                    </>
                  }
                />
              </fieldset>
            </li>
          ))}
        </ol>
        {errorOf('steps') && !Object.keys(errors).some((f) => /^steps\.\d/.test(f)) ? <p className="text-xs text-red-600">{errorOf('steps')}</p> : null}
        <Button disabled={fields.steps.length >= MAX_STEPS} onClick={() => set({ steps: [...fields.steps, emptyStep(86_400)] })}>
          Add step
        </Button>
      </Section>

      <Section title="Sending" description="Limits protect the inbox's reputation; a send outside the window waits for it.">
        <Checkbox label="Stop when the lead replies" checked={fields.stopOnReply} onChange={(e) => set({ stopOnReply: e.target.checked })} />
        <div className="grid grid-cols-1 gap-4 md:grid-cols-3">
          <TextField
            label="Messages per minute"
            type="number"
            min={1}
            max={100_000}
            value={fields.perMinute}
            onChange={(e) => set({ perMinute: e.target.value })}
            error={errorOf('settings.perMinute')}
          />
          <TextField
            label="Messages per day"
            type="number"
            min={1}
            max={10_000_000}
            value={fields.dailyLimit}
            onChange={(e) => set({ dailyLimit: e.target.value })}
            error={errorOf('settings.dailyLimit')}
          />
          <TextField
            label="Pause after failures in a row"
            type="number"
            min={1}
            max={100_000}
            value={fields.maxErrors}
            onChange={(e) => set({ maxErrors: e.target.value })}
            error={errorOf('settings.maxErrors')}
          />
        </div>
        <Checkbox label="Send only within a window" checked={fields.windowOn} onChange={(e) => set({ windowOn: e.target.checked })} />
        {fields.windowOn ? (
          <div className="space-y-3 rounded-md border border-slate-200 p-4">
            <fieldset>
              <legend className="mb-1 text-sm font-medium text-slate-700">Sending days</legend>
              <div className="flex flex-wrap gap-3">
                {WEEKDAYS.map(([day, label]) => (
                  <Checkbox
                    key={day}
                    label={label}
                    checked={fields.windowDays.includes(day)}
                    onChange={(e) => set({ windowDays: e.target.checked ? [...fields.windowDays, day] : fields.windowDays.filter((d) => d !== day) })}
                  />
                ))}
              </div>
              {errorOf('settings.window.days') ? <p className="mt-1 text-xs text-red-600">{errorOf('settings.window.days')}</p> : null}
            </fieldset>
            <div className="grid grid-cols-1 gap-4 md:grid-cols-3">
              <TextField
                label="From"
                type="time"
                required
                value={fields.windowFrom}
                onChange={(e) => set({ windowFrom: e.target.value })}
                error={errors['settings.window.from'] ?? errors['settings.window']}
              />
              <TextField
                label="To"
                type="time"
                required
                value={fields.windowTo}
                onChange={(e) => set({ windowTo: e.target.value })}
                error={errors['settings.window.to']}
              />
              <SelectField
                label="Time zone"
                value={fields.timezone}
                onChange={(e) => set({ timezone: e.target.value })}
                error={errors['settings.window.timezone']}
                options={timeZones(fields.timezone)}
              />
            </div>
          </div>
        ) : null}
      </Section>

      <Section title="Schedule">
        <div className="max-w-xs">
          <TextField
            label="Start no earlier than"
            type="datetime-local"
            value={fields.scheduledAt}
            onChange={(e) => set({ scheduledAt: e.target.value })}
            error={errorOf('scheduledAt')}
            hint="Optional, in your time zone. Starting before then schedules the campaign."
          />
        </div>
      </Section>

      <div className="flex items-center justify-end gap-3 border-t border-slate-200 pt-4">
        <div className="mr-auto">
          <FormError error={error} />
        </div>
        <Button onClick={onCancel}>Cancel</Button>
        <Button type="submit" variant="primary" disabled={pending}>
          {pending ? 'Saving…' : submitLabel}
        </Button>
      </div>
    </form>
  );
}

/** Who receives it: a filter of the project's leads (with a live count) or chosen lead ids. */
function Audience({
  orgId,
  fields,
  set,
  projectId,
  disabled,
  error,
}: {
  orgId: string;
  fields: CampaignFields;
  set: (patch: Partial<CampaignFields>) => void;
  projectId: string | undefined;
  disabled: boolean;
  error: string | undefined;
}) {
  const filter = useSettled(audienceFilter(fields));
  const preview = useQuery({ ...audienceQuery(orgId, projectId, filter), enabled: fields.audience === 'filter', placeholderData: keepPreviousData });
  const ids = leadIdsOf(fields);
  const radio = 'size-4 border-slate-300 text-indigo-600';
  return (
    <Section
      title="Audience"
      description={
        disabled ? 'Resolved when the campaign started; it no longer changes.' : 'Resolved once, when the campaign starts: leads added later are not included.'
      }
    >
      <div role="radiogroup" aria-label="Audience" className="flex flex-wrap gap-5 text-sm text-slate-700">
        <label className="inline-flex items-center gap-2">
          <input
            type="radio"
            name="audience"
            className={radio}
            disabled={disabled}
            checked={fields.audience === 'filter'}
            onChange={() => set({ audience: 'filter' })}
          />
          Leads matching a filter
        </label>
        <label className="inline-flex items-center gap-2">
          <input
            type="radio"
            name="audience"
            className={radio}
            disabled={disabled}
            checked={fields.audience === 'leads'}
            onChange={() => set({ audience: 'leads' })}
          />
          Chosen leads (by id)
        </label>
      </div>
      {fields.audience === 'filter' ? (
        <>
          <fieldset disabled={disabled}>
            <legend className="mb-1 text-sm font-medium text-slate-700">Lead status</legend>
            <div className="flex flex-wrap gap-3">
              {LEAD_STATUSES.map((status) => (
                <Checkbox
                  key={status}
                  label={statusLabel(status)}
                  checked={fields.statuses.includes(status)}
                  onChange={(e) => set({ statuses: e.target.checked ? [...fields.statuses, status] : fields.statuses.filter((s) => s !== status) })}
                />
              ))}
            </div>
            <p className="mt-1 text-xs text-slate-500">Any status when none is ticked.</p>
          </fieldset>
          <div className="grid grid-cols-1 gap-4 md:grid-cols-2">
            <TextField
              label="Tags"
              disabled={disabled}
              value={fields.tags}
              onChange={(e) => set({ tags: e.target.value })}
              placeholder="newsletter, spring"
              hint="Comma-separated: leads carrying all of them."
            />
            <TextField
              label="Minimum score"
              type="number"
              min={0}
              max={100}
              disabled={disabled}
              value={fields.minScore}
              onChange={(e) => set({ minScore: e.target.value })}
            />
          </div>
          <p role="status" aria-label="Audience preview" className="rounded-md bg-indigo-50 px-3 py-2 text-sm text-indigo-900">
            {preview.isError ? (
              'The count could not be read.'
            ) : preview.data ? (
              <>
                <strong>
                  {preview.data.totalIsEstimate ? 'About ' : ''}
                  {preview.data.total.toLocaleString()}
                </strong>{' '}
                {preview.data.total === 1 ? 'lead matches' : 'leads match'} now{projectId ? " in the inbox's project" : ''}. Leads without an address on the
                channel, suppressed or opted out are skipped at the start.
              </>
            ) : (
              'Counting leads…'
            )}
          </p>
        </>
      ) : (
        <TextArea
          label="Lead ids"
          rows={4}
          disabled={disabled}
          value={fields.leadIds}
          onChange={(e) => set({ leadIds: e.target.value })}
          hint={`${ids.length} ${ids.length === 1 ? 'lead' : 'leads'}: one id per line, or separated by commas.`}
        />
      )}
      {error ? <p className="text-xs text-red-600">{error}</p> : null}
    </Section>
  );
}
