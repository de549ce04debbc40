// First: the page's network, before the typed client is created.
import { json, net } from '../../analytics/page-network';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { startSession } from '../../../lib/session';
import { OAuthConnectButtons } from './oauth-buttons';

beforeEach(() => {
  net.requests = [];
  startSession({ accessToken: 'token', expiresIn: 900 });
  window.history.replaceState(null, '', '/orgs/org_1/settings/integrations?provider=google&error=access_denied');
});
afterEach(cleanup);

function renderButtons() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <OAuthConnectButtons orgId="org_1" />
    </QueryClientProvider>,
  );
}

describe('the connect buttons', () => {
  it("start the provider's flow with this page (without an earlier return's parameters) to come back to, and show the service's refusal", async () => {
    net.answer = (request) =>
      request.path.endsWith('/projects')
        ? json(200, [])
        : json(422, {
            code: 'INTEGRATION_NOT_CONFIGURED',
            message: 'Connecting LinkedIn is not configured on this server: set LINKEDIN_CLIENT_ID and LINKEDIN_CLIENT_SECRET',
          });
    renderButtons();
    expect(screen.getAllByRole('button').map((b) => b.textContent)).toEqual(['inConnect LinkedIn', '𝕏Connect X', 'GConnect Google']);
    await userEvent.click(screen.getByRole('button', { name: 'Connect LinkedIn' }));
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Connecting LinkedIn is not configured on this server: set LINKEDIN_CLIENT_ID and LINKEDIN_CLIENT_SECRET');
    expect(net.requests.filter((r) => r.method === 'POST')).toEqual([
      {
        method: 'POST',
        path: '/api/v1/orgs/org_1/integrations/oauth/linkedin/start',
        body: { returnTo: 'http://localhost:3000/orgs/org_1/settings/integrations?provider=google' },
      },
    ]);
    // Refused, the buttons can be used again.
    expect(screen.getByRole('button', { name: 'Connect Google' })).toBeEnabled();
  });
});
