import { describe, expect, it } from 'vitest';
import { oauthErrorText, oauthNotice, returnToFor } from './oauth';
import { configPatch, describeSources, splitAccounts, syncBody, syncRange } from './google';

describe('the OAuth return', () => {
  it("comes back to this page: absolute, same path and filters, without an earlier return's parameters or a fragment", () => {
    expect(
      returnToFor('http://127.0.0.1:3000/orgs/org_1/settings/integrations?provider=google&connected=int_9&error=access_denied&error_description=no#top'),
    ).toBe('http://127.0.0.1:3000/orgs/org_1/settings/integrations?provider=google');
    expect(returnToFor('https://panel.example.com/orgs/o/settings/integrations')).toBe('https://panel.example.com/orgs/o/settings/integrations');
  });

  it('says what happened: the connected account by name, a refusal in words, an unknown code as it came', () => {
    expect(oauthNotice({})).toBeNull();
    expect(oauthNotice({ connected: 'int_1' }, 'ops@acme.example (Google)')).toEqual({
      tone: 'success',
      integrationId: 'int_1',
      text: 'Connected ops@acme.example (Google).',
    });
    expect(oauthNotice({ connected: 'int_1' })).toMatchObject({ tone: 'success', text: 'The account is connected.' });
    const denied = oauthNotice({ error: 'access_denied' })!;
    expect(denied.tone).toBe('error');
    expect(denied.text).toMatch(/^Access was declined at the provider, so nothing was connected/);
    // An error wins over a connected id (the callback sends one or the other).
    expect(oauthNotice({ connected: 'int_1', error: 'token_exchange_failed' })!.tone).toBe('error');
    expect(oauthErrorText('weird_code', ' the server said no ')).toBe('The connection failed (weird_code): the server said no. Start the connection again.');
    expect(oauthErrorText('weird_code')).toBe('The connection failed (weird_code). Start the connection again.');
  });
});

describe('the Google account picker', () => {
  it('splits the accounts into GA4 properties and Search Console sites, by their source or else by the id', () => {
    const { properties, sites } = splitAccounts([
      { id: 'sc-domain:acme.example', name: 'acme.example' },
      { id: 'properties/2', name: 'Shop', source: 'ga4' },
      { id: 'https://www.acme.example/', name: 'https://www.acme.example/', source: 'gsc' },
      { id: '123', name: 'Blog' },
    ]);
    expect(properties.map((a) => a.id)).toEqual(['123', 'properties/2']);
    expect(sites.map((a) => a.id)).toEqual(['sc-domain:acme.example', 'https://www.acme.example/']);
  });

  it('sends only the sources that changed, an emptied one as "" (the service removes it), nothing when nothing changed', () => {
    expect(configPatch({}, { propertyId: 'properties/1', siteUrl: '' })).toEqual({ propertyId: 'properties/1' });
    expect(configPatch({ propertyId: 'properties/1', siteUrl: 'sc-domain:a.example' }, { propertyId: 'properties/1', siteUrl: '' })).toEqual({ siteUrl: '' });
    expect(configPatch({ propertyId: 'properties/1' }, { propertyId: 'properties/1', siteUrl: '' })).toBeNull();
    expect(configPatch(undefined, { propertyId: ' ', siteUrl: '' })).toBeNull();
  });

  it('names the sources it reads, by the account names when known', () => {
    expect(describeSources({})).toBe('No property or site chosen yet');
    expect(describeSources({ propertyId: 'properties/1', siteUrl: 'sc-domain:a.example' }, [{ id: 'properties/1', name: 'Acme web' }])).toBe(
      'GA4 Acme web · Search Console sc-domain:a.example',
    );
  });

  it('fetches a history up to yesterday (UTC), or leaves the range to the service for the recent days', () => {
    const now = new Date('2026-03-10T01:30:00Z');
    expect(syncBody('recent', now)).toEqual({});
    expect(syncBody('28', now)).toEqual({ from: '2026-02-10' });
    expect(syncBody('90', now)).toEqual({ from: '2025-12-10' });
    expect(syncRange('2026-03-01', '2026-03-01', 'en-US')).toBe('Mar 1, 2026');
    expect(syncRange('2026-03-01', '2026-03-04', 'en-US')).toMatch(/^Mar 1\s?–\s?4, 2026$/);
  });
});
