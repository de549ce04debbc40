// First: the page's network, before the typed client is created.
import { json, net } from './page-network';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { startSession } from '../../lib/session';
import { RuleDialog } from './rule-dialogs';

beforeEach(() => {
  net.requests = [];
  startSession({ accessToken: 'token', expiresIn: 900 });
});
afterEach(cleanup);

function renderDialog(onClose = vi.fn()) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <RuleDialog orgId="org_1" integrations={[{ id: 'int_g', name: 'ops@acme.example' }]} defaultIntegrationId="int_g" onClose={onClose} />
    </QueryClientProvider>,
  );
  return { onClose, dialog: screen.getByRole('dialog', { name: 'New rule' }) };
}

describe('the rule dialog', () => {
  it('checks the fields before sending, shows the minimum baseline only for a change, and sends CTR as a fraction', async () => {
    net.answer = () => json(201, { id: 'rule_1' });
    const { dialog, onClose } = renderDialog();
    const form = within(dialog).getByRole('form', { name: 'Rule' });
    expect(within(form).getByLabelText('Google account')).toHaveValue('int_g');
    expect(within(form).queryByLabelText('Minimum baseline')).toBeNull();

    await userEvent.click(within(form).getByRole('button', { name: 'Create rule' }));
    expect(within(form).getByText('Give the rule a name.')).toBeInTheDocument();
    expect(within(form).getByText('Give the value to compare with.')).toBeInTheDocument();
    expect(within(form).getByLabelText('Name')).toHaveAttribute('aria-invalid', 'true');
    expect(net.requests).toHaveLength(0);

    await userEvent.selectOptions(within(form).getByLabelText('Condition'), 'pct_change');
    expect(within(form).getByLabelText('Minimum baseline')).toBeInTheDocument();
    await userEvent.selectOptions(within(form).getByLabelText('Condition'), 'below');
    expect(within(form).queryByLabelText('Minimum baseline')).toBeNull();

    await userEvent.type(within(form).getByLabelText('Name'), 'CTR fell');
    await userEvent.selectOptions(within(form).getByLabelText('Metric'), 'gsc.ctr');
    await userEvent.type(within(form).getByLabelText('Threshold'), '2.5');
    expect(within(form).getByText('Fires on: CTR below 2.5 % over the last 7 days.')).toBeInTheDocument();
    await userEvent.click(within(form).getByRole('button', { name: 'Create rule' }));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(net.requests).toEqual([
      {
        method: 'POST',
        path: '/api/v1/orgs/org_1/analytics/rules',
        body: { name: 'CTR fell', integrationId: 'int_g', metric: 'gsc.ctr', compare: 'below', threshold: 0.025, window: '7d', minBaseline: null },
      },
    ]);
  });

  it("shows the API's refusal under its field and beside the buttons, and stays open", async () => {
    net.answer = () =>
      json(400, {
        code: 'VALIDATION',
        message: 'integrationId: no google integration with this id',
        details: [{ field: 'body.integrationId', message: 'no google integration with this id' }],
      });
    const { dialog, onClose } = renderDialog();
    await userEvent.type(within(dialog).getByLabelText('Name'), 'Sessions drop');
    await userEvent.type(within(dialog).getByLabelText('Threshold'), '100');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Create rule' }));
    await within(dialog).findByText('no google integration with this id');
    expect(within(dialog).getByRole('alert')).toHaveTextContent('integrationId: no google integration with this id');
    expect(onClose).not.toHaveBeenCalled();
  });
});
