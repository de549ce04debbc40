import type { paths } from '../../api/schema';
import type { Campaign } from './model';

type CreateBody = paths['/api/v1/orgs/{orgId}/campaigns']['post']['requestBody']['content']['application/json'];
type PatchBody = NonNullable<paths['/api/v1/orgs/{orgId}/campaigns/{id}']['patch']['requestBody']>['content']['application/json'];
type StepBody = CreateBody['steps'][number];
type Window = NonNullable<NonNullable<CreateBody['settings']>['window']>;

/** A step as edited: the delay in days, hours and minutes (the API counts seconds). */
export interface StepFields {
  days: string;
  hours: string;
  minutes: string;
  /** Seconds below a minute of a delay set over the API: kept, so saving does not change it. */
  seconds: number;
  subject: string;
  text: string;
  /** A WhatsApp template set over the API: kept as it is (the panel edits text steps). */
  template?: StepBody['template'];
}

/** The editor's fields; numbers are kept as typed, so a field can be empty while editing. */
export interface CampaignFields {
  name: string;
  inboxId: string;
  audience: 'filter' | 'leads';
  statuses: string[];
  tags: string;
  minScore: string;
  leadIds: string;
  steps: StepFields[];
  stopOnReply: boolean;
  perMinute: string;
  dailyLimit: string;
  maxErrors: string;
  windowOn: boolean;
  windowDays: number[];
  windowFrom: string;
  windowTo: string;
  timezone: string;
  /** A `datetime-local` value (the browser's time zone), or empty for "when started". */
  scheduledAt: string;
}

export const WEEKDAYS = [
  [1, 'Mon'],
  [2, 'Tue'],
  [3, 'Wed'],
  [4, 'Thu'],
  [5, 'Fri'],
  [6, 'Sat'],
  [7, 'Sun'],
] as const;

export const emptyStep = (delaySeconds = 0): StepFields => ({ ...splitDelay(delaySeconds), subject: '', text: '' });

export function emptyCampaign(timezone = Intl.DateTimeFormat().resolvedOptions().timeZone): CampaignFields {
  return {
    name: '',
    inboxId: '',
    audience: 'filter',
    statuses: [],
    tags: '',
    minScore: '',
    leadIds: '',
    steps: [emptyStep()],
    stopOnReply: true,
    perMinute: '60',
    dailyLimit: '1000',
    maxErrors: '50',
    windowOn: false,
    windowDays: [1, 2, 3, 4, 5],
    windowFrom: '09:00',
    windowTo: '18:00',
    timezone,
    scheduledAt: '',
  };
}

export function splitDelay(total: number): { days: string; hours: string; minutes: string; seconds: number } {
  const days = Math.floor(total / 86_400);
  const hours = Math.floor((total % 86_400) / 3_600);
  const minutes = Math.floor((total % 3_600) / 60);
  return { days: String(days), hours: String(hours), minutes: String(minutes), seconds: total % 60 };
}

const count = (value: string) => {
  const n = Number(value.trim() || 0);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
};

export const delayOf = (step: StepFields) => count(step.days) * 86_400 + count(step.hours) * 3_600 + count(step.minutes) * 60 + step.seconds;

/** "immediately", "after 2 days 3 hours". */
export function describeDelay(seconds: number): string {
  if (seconds === 0) return 'immediately';
  const { days, hours, minutes, seconds: rest } = splitDelay(seconds);
  const parts = [
    [days, 'day'],
    [hours, 'hour'],
    [minutes, 'minute'],
    [String(rest), 'second'],
  ]
    .filter(([n]) => n !== '0')
    .map(([n, unit]) => `${n} ${unit}${n === '1' ? '' : 's'}`);
  return `after ${parts.join(' ')}`;
}

const list = (value: string) =>
  value
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** The leads filter of the audience, as `GET …/leads` takes it too (for the preview count). */
export function audienceFilter(fields: CampaignFields): { status?: string; tags?: string[]; minScore?: number } {
  const tags = list(fields.tags);
  const minScore = fields.minScore.trim() === '' ? undefined : Number(fields.minScore);
  return {
    ...(fields.statuses.length ? { status: fields.statuses.join(',') } : {}),
    ...(tags.length ? { tags } : {}),
    ...(minScore !== undefined && Number.isInteger(minScore) ? { minScore } : {}),
  };
}

export const leadIdsOf = (fields: CampaignFields) => [...new Set(list(fields.leadIds))];

/** `datetime-local` ↔ ISO 8601: the input shows and takes the browser's local time. */
export function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
const fromLocalInput = (value: string) => (value ? new Date(value).toISOString() : null);

/** An API number field as typed: a number, or undefined for blank (the API's default then). */
function optionalInt(value: string): number | undefined {
  if (value.trim() === '') return undefined;
  return Number(value);
}

function stepBody(step: StepFields, channel: string | undefined): StepBody {
  const subject = step.subject.trim();
  return {
    delaySeconds: delayOf(step),
    // Only e-mail has subjects (and follow-ups answer in the first step's thread).
    ...(channel === 'email' && subject ? { subject } : {}),
    text: step.text,
    ...(step.template ? { template: step.template } : {}),
  };
}

function settingsBody(fields: CampaignFields): NonNullable<CreateBody['settings']> {
  const window: Window | undefined = fields.windowOn
    ? { days: [...fields.windowDays].sort(), from: fields.windowFrom, to: fields.windowTo, timezone: fields.timezone }
    : undefined;
  const perMinute = optionalInt(fields.perMinute);
  const dailyLimit = optionalInt(fields.dailyLimit);
  const maxErrors = optionalInt(fields.maxErrors);
  return {
    stopOnReply: fields.stopOnReply,
    ...(perMinute !== undefined ? { perMinute } : {}),
    ...(dailyLimit !== undefined ? { dailyLimit } : {}),
    ...(maxErrors !== undefined ? { maxErrors } : {}),
    ...(window ? { window } : {}),
  };
}

export function createBody(fields: CampaignFields, channel: string | undefined): CreateBody {
  const scheduledAt = fromLocalInput(fields.scheduledAt);
  return {
    name: fields.name.trim(),
    inboxId: fields.inboxId,
    audience: fields.audience === 'leads' ? { leadIds: leadIdsOf(fields) } : audienceFilter(fields),
    steps: fields.steps.map((s) => stepBody(s, channel)),
    settings: settingsBody(fields),
    ...(scheduledAt ? { scheduledAt } : {}),
  };
}

/**
 * The PATCH of an edit. A campaign that has started keeps its audience and inbox (the API answers
 * 409 to a change of either), so those are sent only before the start.
 */
export function patchBody(fields: CampaignFields, channel: string | undefined, campaign: Campaign): PatchBody {
  const { audience, inboxId, scheduledAt: _scheduledAt, ...rest } = createBody(fields, channel);
  return {
    ...rest,
    // An unticked window on a campaign that had one removes it (leaving it out would keep it).
    ...(rest.settings && !fields.windowOn ? { settings: { ...rest.settings, window: null } } : {}),
    ...(campaign.startedAt ? {} : { audience, inboxId }),
    scheduledAt: fromLocalInput(fields.scheduledAt),
  };
}

/** The editor's fields for a stored campaign. */
export function fieldsOf(campaign: Campaign): CampaignFields {
  const base = emptyCampaign();
  const audience = campaign.audience as { leadIds?: string[]; status?: string; tags?: string[]; minScore?: number };
  const settings = campaign.settings as { stopOnReply?: boolean; perMinute?: number; dailyLimit?: number; maxErrors?: number; window?: Window };
  const steps = campaign.steps as unknown as StepBody[];
  return {
    ...base,
    name: campaign.name,
    inboxId: campaign.inboxId,
    audience: audience.leadIds ? 'leads' : 'filter',
    statuses: audience.status
      ? audience.status
          .split(',')
          .map((s) => s.trim().toUpperCase())
          .filter(Boolean)
      : [],
    tags: (audience.tags ?? []).join(', '),
    minScore: audience.minScore === undefined ? '' : String(audience.minScore),
    leadIds: (audience.leadIds ?? []).join('\n'),
    steps: steps.map((s) => ({ ...splitDelay(s.delaySeconds), subject: s.subject ?? '', text: s.text, ...(s.template ? { template: s.template } : {}) })),
    stopOnReply: settings.stopOnReply ?? true,
    perMinute: String(settings.perMinute ?? base.perMinute),
    dailyLimit: String(settings.dailyLimit ?? base.dailyLimit),
    maxErrors: String(settings.maxErrors ?? base.maxErrors),
    windowOn: Boolean(settings.window),
    ...(settings.window
      ? { windowDays: settings.window.days, windowFrom: settings.window.from, windowTo: settings.window.to, timezone: settings.window.timezone }
      : {}),
    scheduledAt: toLocalInput(campaign.scheduledAt),
  };
}

/**
 * The API's field errors by the editor's names: `steps.0.subject` whether the schema check said
 * `body.steps[0].subject` or the service `body.steps.0.subject`.
 */
export function editorErrors(fieldErrors: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(fieldErrors).map(([field, message]) => [field.replace(/\[(\d+)\]/g, '.$1'), message]));
}
