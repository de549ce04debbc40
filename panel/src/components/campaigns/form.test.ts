import { describe, expect, it } from 'vitest';
import { createBody, describeDelay, editorErrors, emptyCampaign, fieldsOf, patchBody, splitDelay } from './form';
import type { Campaign } from './model';

const stored = (over: Partial<Campaign> = {}): Campaign => ({
  id: 'cmp_1',
  name: 'Welcome',
  projectId: 'prj_1',
  inboxId: 'inb_1',
  channel: 'email',
  status: 'DRAFT',
  audience: { tags: ['spring'], status: 'NEW,CONTACTED', minScore: 40 },
  steps: [
    { delaySeconds: 0, subject: 'Hi {{ lead.name }}', text: 'Hello' },
    { delaySeconds: 2 * 86_400 + 3 * 3_600 + 15 * 60 + 7, text: 'Again' },
  ],
  settings: {
    stopOnReply: false,
    perMinute: 10,
    dailyLimit: 500,
    maxErrors: 5,
    window: { days: [1, 3], from: '09:00', to: '17:00', timezone: 'Europe/Paris' },
  },
  scheduledAt: null,
  testMode: false,
  total: 0,
  stats: { total: 0, sent: 0, delivered: 0, read: 0, replied: 0, failed: 0, skipped: 0, pending: 0 },
  pausedReason: null,
  startedAt: null,
  finishedAt: null,
  createdAt: '2026-11-23T10:00:00.000Z',
  updatedAt: '2026-11-23T10:00:00.000Z',
  ...over,
});

describe("the campaign editor's fields", () => {
  it('show delays as days, hours and minutes and say them in words', () => {
    expect(splitDelay(2 * 86_400 + 3 * 3_600 + 15 * 60)).toEqual({ days: '2', hours: '3', minutes: '15', seconds: 0 });
    // Seconds set over the API stay as they are (3599 is not "60 minutes").
    expect(splitDelay(3_599)).toEqual({ days: '0', hours: '0', minutes: '59', seconds: 59 });
    expect(describeDelay(0)).toBe('immediately');
    expect(describeDelay(86_400 + 3_600)).toBe('after 1 day 1 hour');
    expect(describeDelay(30)).toBe('after 30 seconds');
    expect(describeDelay(90)).toBe('after 1 minute 30 seconds');
  });

  it('read a stored campaign back into the same body (a round trip changes nothing)', () => {
    const campaign = stored();
    const fields = fieldsOf(campaign);
    expect(fields).toMatchObject({
      audience: 'filter',
      statuses: ['NEW', 'CONTACTED'],
      tags: 'spring',
      minScore: '40',
      windowOn: true,
      timezone: 'Europe/Paris',
    });
    expect(createBody(fields, 'email')).toEqual({
      name: 'Welcome',
      inboxId: 'inb_1',
      audience: campaign.audience,
      steps: campaign.steps,
      settings: {
        stopOnReply: false,
        perMinute: 10,
        dailyLimit: 500,
        maxErrors: 5,
        window: { days: [1, 3], from: '09:00', to: '17:00', timezone: 'Europe/Paris' },
      },
    });
  });

  it("send lead ids without duplicates, no subjects outside e-mail, and blanks as the API's defaults", () => {
    const fields = {
      ...emptyCampaign('UTC'),
      name: ' Hi ',
      inboxId: 'inb_2',
      audience: 'leads' as const,
      leadIds: 'lead_a, lead_b\nlead_a',
      perMinute: '',
      steps: [{ days: '', hours: '1', minutes: '', seconds: 0, subject: 'ignored', text: 'Hey' }],
    };
    const body = createBody(fields, 'telegram');
    expect(body.audience).toEqual({ leadIds: ['lead_a', 'lead_b'] });
    expect(body.steps).toEqual([{ delaySeconds: 3_600, text: 'Hey' }]);
    expect(body.name).toBe('Hi');
    expect(body.settings).toEqual({ stopOnReply: true, dailyLimit: 1000, maxErrors: 50 });
  });

  it('leave the audience and inbox out of the edit of a started campaign (the API refuses to change them) and clear a removed schedule', () => {
    const before = patchBody(fieldsOf(stored({ scheduledAt: '2026-12-01T08:00:00.000Z' })), 'email', stored());
    expect(before).toMatchObject({ audience: expect.any(Object), inboxId: 'inb_1', scheduledAt: '2026-12-01T08:00:00.000Z' });
    const started = stored({ status: 'PAUSED', startedAt: '2026-11-23T10:00:00.000Z' });
    const after = patchBody({ ...fieldsOf(started), scheduledAt: '' }, 'email', started);
    expect(after).not.toHaveProperty('audience');
    expect(after).not.toHaveProperty('inboxId');
    expect(after.scheduledAt).toBeNull();
  });

  it("name the API's field errors one way, whether the schema check or the service reported them", () => {
    expect(editorErrors({ 'steps[0].text': 'is required', 'steps.1.subject': 'is required for e-mail' })).toEqual({
      'steps.0.text': 'is required',
      'steps.1.subject': 'is required for e-mail',
    });
  });
});
