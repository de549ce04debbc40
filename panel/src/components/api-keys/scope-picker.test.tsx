import { useState } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { ScopePicker } from './scope-picker';
import { ALL_SCOPES, describeScopes, examplePath, type Scope } from './scopes';

afterEach(cleanup);

function Harness() {
  const [value, setValue] = useState<Scope[]>([]);
  return (
    <>
      <ScopePicker value={value} onChange={setValue} />
      <output aria-label="value">{JSON.stringify(value)}</output>
    </>
  );
}
const value = () => JSON.parse(screen.getByLabelText('value').textContent ?? '[]') as string[];

describe('API key scopes', () => {
  it('offer every scope of CONTRACT §2 once, read beside write', () => {
    expect(ALL_SCOPES).toEqual([
      'leads:read',
      'leads:write',
      'workflows:read',
      'workflows:write',
      'agents:read',
      'agents:write',
      'reports:read',
      'reports:write',
      'content:read',
      'content:write',
      'media:write',
      'usage:read',
      'conversations:read',
      'conversations:write',
      'campaigns:read',
      'campaigns:write',
      'analytics:read',
      'analytics:write',
      'webhooks:read',
      'webhooks:write',
    ]);
    expect(describeScopes(['*'])).toEqual(['Full access (*)']);
    expect(examplePath(['usage:read'])).toBe('/usage');
    expect(examplePath(['media:write'])).toBe('');
  });

  it('are chosen one by one (in a stable order), or all at once with full access, which locks the rest', async () => {
    render(<Harness />);
    expect(screen.getByText('Choose at least one scope.')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('checkbox', { name: 'webhooks:write' }));
    await userEvent.click(screen.getByRole('checkbox', { name: 'leads:read' }));
    expect(value()).toEqual(['leads:read', 'webhooks:write']);
    expect(screen.getByText('2 scopes: leads:read, webhooks:write')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('checkbox', { name: 'leads:read' }));
    expect(value()).toEqual(['webhooks:write']);

    await userEvent.click(screen.getByRole('checkbox', { name: /Full access/ }));
    expect(value()).toEqual(['*']);
    expect(screen.getByRole('checkbox', { name: 'agents:write' })).toBeChecked();
    expect(screen.getByRole('checkbox', { name: 'agents:write' })).toBeDisabled();
    await userEvent.click(screen.getByRole('checkbox', { name: /Full access/ }));
    expect(value()).toEqual([]);
  });

  it('lay the resources out as a table with row and column headers', () => {
    render(<Harness />);
    expect(screen.getByRole('columnheader', { name: 'Read' })).toBeInTheDocument();
    expect(screen.getByRole('rowheader', { name: /Media/ })).toBeInTheDocument();
  });
});
