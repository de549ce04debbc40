import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall, browserAvailable, screenshot, signUp, startE2E, type E2E } from './harness.ts';

let e2e: E2E;
beforeAll(async () => {
  if (browserAvailable) e2e = await startE2E();
});
afterAll(async () => e2e?.close());

describe.runIf(browserAvailable)('leads in the panel', () => {
  it('signs in, creates a lead, sees a duplicate recognised, bulk-tags, edits and reads its history', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Leads' }).click();
    await expect.poll(() => page.getByText('No leads yet').isVisible()).toBe(true);

    await page.getByRole('button', { name: 'New lead' }).click();
    const dialog = page.getByRole('dialog', { name: 'New lead' });
    await dialog.getByLabel('Name').fill('Ada Lovelace');
    await dialog.getByLabel('Email').fill('ada@engines.example');
    await dialog.getByLabel('Company').fill('Analytical Engines');
    await dialog.getByRole('button', { name: 'Create lead' }).click();
    await dialog.getByText('Lead created.').waitFor();
    await dialog.getByRole('button', { name: 'Add another' }).click();
    await dialog.getByLabel('Name').fill('Ada L.');
    await dialog.getByLabel('Email').fill('ADA@engines.example ');
    await dialog.getByRole('button', { name: 'Create lead' }).click();
    await dialog.getByText(/matched an existing lead on email/).waitFor();
    await page.keyboard.press('Escape');

    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/leads`, { name: 'Grace Hopper', email: 'grace@navy.example', company: 'Navy' });
    await page.reload();
    const table = page.getByRole('table', { name: 'Leads' });
    await table.getByRole('button', { name: 'Grace Hopper' }).waitFor();
    expect(await table.locator('tbody tr').count()).toBe(2);

    // Select both and tag them.
    await page.getByLabel('Select all on this page').check();
    await page.getByRole('button', { name: 'Add tags' }).click();
    const tagDialog = page.getByRole('dialog', { name: /Add tags to 2 leads/ });
    await tagDialog.getByLabel('Tags').fill('vip, fair-2026');
    await tagDialog.getByRole('button', { name: 'Add tags' }).click();
    await page.getByText('2 of 2 leads updated.').waitFor();
    await expect.poll(() => table.getByText('fair-2026').count()).toBe(2);
    const stored = await apiCall<{ items: { tags: string[] }[] }>(e2e, accessToken, 'GET', `/orgs/${orgId}/leads?tags=vip`);
    expect(stored.items.map((l) => l.tags.sort())).toEqual([
      ['fair-2026', 'vip'],
      ['fair-2026', 'vip'],
    ]);

    // Filters live in the URL: a reload keeps them.
    await page.getByLabel('Search').fill('grace');
    await expect.poll(() => new URL(page.url()).searchParams.get('q')).toBe('grace');
    await page.reload();
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    await expect.poll(() => page.getByLabel('Search').inputValue()).toBe('grace');

    // The side panel: edit, then the change is in the history.
    await table.getByRole('button', { name: 'Grace Hopper' }).click();
    const panel = page.getByRole('dialog', { name: 'Grace Hopper' });
    await panel.getByLabel('Company').fill('US Navy');
    await panel.getByRole('button', { name: 'Save changes' }).click();
    await panel.getByText('Saved').waitFor();
    await panel.getByText(/company: Navy → US Navy/).waitFor();
    await screenshot(page, 'leads-detail');
  });

  it('imports a CSV: preview, a dry run that changes nothing, then the import with its results', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/leads`, { name: 'Existing', email: 'known@corp.example' });
    const file = join(mkdtempSync(join(tmpdir(), 'csv-')), 'leads.csv');
    writeFileSync(
      file,
      'name,email,company,tags,segment\nKnown Again,known@corp.example,Corp,"a;b",smb\nNew One,new1@corp.example,Corp,a,enterprise\n,,Lonely Corp,,\nNew Two,new2@corp.example,Other,,smb\n',
    );
    await page.goto(`/orgs/${orgId}/leads`);
    await page.getByRole('button', { name: 'Import CSV' }).click();
    const dialog = page.getByRole('dialog', { name: 'Import leads from CSV' });
    await dialog.getByLabel('CSV file').setInputFiles(file);
    await dialog.getByText('leads.csv: 4 rows, 5 columns (segment will be custom fields).').waitFor();
    await dialog.getByRole('table', { name: 'First rows of the file' }).getByText('New Two').waitFor();

    await dialog.getByRole('button', { name: 'Check file' }).click();
    const check = dialog.getByRole('status').filter({ hasText: 'Would create' });
    await check.waitFor();
    expect(await check.innerText()).toMatch(/Would create 2 new leads, would merge 1 into existing ones, 1 row rejected/);
    await dialog.getByText(/Row 3: /).waitFor();
    expect((await apiCall<{ total: number }>(e2e, accessToken, 'GET', `/orgs/${orgId}/leads`)).total).toBe(1);

    await dialog.getByRole('button', { name: 'Import 4 rows' }).click();
    const done = dialog.getByRole('status').filter({ hasText: 'Created' });
    await done.waitFor();
    expect(await done.innerText()).toMatch(/Created 2 new leads, merged 1 into existing ones, 1 row rejected/);
    await screenshot(page, 'leads-import');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => page.getByRole('table', { name: 'Leads' }).locator('tbody tr').count()).toBe(3);
    await screenshot(page, 'leads');
  });
});
