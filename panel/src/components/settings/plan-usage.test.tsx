import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { PlanUsage } from './plan-usage';
import { ErrorState, FormError } from '../ui/states';
import { ApiError } from '../../api/client';

afterEach(cleanup);

const used = { leads: 3, members: 1, webhookEndpoints: 0, inboxes: 1, runsPerMonth: 40, agentRunsPerMonth: 0, campaignMessagesPerMonth: 7 };

describe('the plan in settings', () => {
  it('shows the plan badge, its features and a bar per limit, "Unlimited" where there is none', () => {
    render(<PlanUsage plan={{ plan: 'starter', features: ['workflows', 'webhooks'], limits: { leads: 4, inboxes: 1, runsPerMonth: 50 }, used }} />);
    expect(screen.getByText('starter')).toBeInTheDocument();
    expect(screen.getByText('Workflows').closest('li')).toHaveTextContent('(included)');
    expect(screen.getByText('Agents').closest('li')).toHaveTextContent('(not included)');
    const leads = screen.getByRole('progressbar', { name: 'Leads' });
    expect(leads).toHaveAttribute('aria-valuenow', '3');
    expect(leads).toHaveAttribute('aria-valuemax', '4');
    expect(screen.getByText('3 / 4')).toBeInTheDocument();
    expect(screen.getByRole('progressbar', { name: 'Inboxes' })).toHaveAttribute('aria-valuetext', '1 of 1');
    expect(screen.getByRole('progressbar', { name: 'Workflow runs' })).toHaveAttribute('aria-valuetext', '40 of 50');
    expect(screen.getByRole('progressbar', { name: 'Campaign messages' })).toHaveAttribute('aria-valuetext', '7 used, unlimited');
    expect(screen.getByText('7 · Unlimited')).toBeInTheDocument();
    expect(screen.getAllByRole('progressbar')).toHaveLength(7);
  });

  it('says when the service has no plans', () => {
    render(
      <PlanUsage
        plan={{ plan: 'unlimited', features: ['workflows', 'agents', 'content', 'conversations', 'campaigns', 'analytics', 'webhooks'], limits: {}, used }}
      />,
    );
    expect(screen.getByText('unlimited')).toBeInTheDocument();
    expect(screen.getByText(/no plans configured/)).toBeInTheDocument();
    expect(screen.getAllByText(/Unlimited$/)).toHaveLength(7);
  });
});

describe('errors of the plan', () => {
  it('a 403 PLAN_FEATURE says the plan lacks it, not that the role does', () => {
    render(
      <ErrorState
        error={
          new ApiError(403, { statusCode: 403, error: 'Forbidden', code: 'PLAN_FEATURE', message: 'The organization\'s plan "bare" does not include agents' })
        }
      />,
    );
    expect(screen.getByRole('alert')).toHaveTextContent('Not included in your plan');
    expect(screen.getByRole('alert')).toHaveTextContent("does not include agents. Ask the operator of this service to change the organization's plan");
    expect(screen.getByRole('alert')).not.toHaveTextContent('You do not have access');
  });

  it('a 429 PLAN_LIMIT names the limit and what is used', () => {
    const error = new ApiError(429, {
      statusCode: 429,
      error: 'Too Many Requests',
      code: 'PLAN_LIMIT',
      message: "The plan's leads limit (3) is reached for this organization",
      details: { limit: 'leads', value: 3, used: 3 },
    } as never);
    render(<FormError error={error} />);
    expect(screen.getByRole('alert')).toHaveTextContent(
      "Plan limit reached: The plan's leads limit (3) is reached for this organization (3 of 3 used). Remove some first, or ask the operator of this service for a larger plan.",
    );
    cleanup();
    render(
      <ErrorState
        error={
          new ApiError(429, {
            statusCode: 429,
            error: 'Too Many Requests',
            code: 'PLAN_LIMIT',
            message: "The plan's runsPerMonth limit (2) is reached this month",
            details: { limit: 'runsPerMonth', value: 2, used: 2 },
          } as never)
        }
      />,
    );
    expect(screen.getByRole('alert')).toHaveTextContent('resets when the month ends (UTC)');
  });
});
