import { useState } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { PLATFORM_EVENT_NAMES } from '../../../../src/shared/event-names.ts';
import { EventPicker } from './event-picker';
import { describeEvents, eventGroups, toggleEvent, toggleGroup } from './events';

afterEach(cleanup);

/** The picker with its value held as a form would, and shown for the test to read. */
function Harness({ initial = [] as string[] }) {
  const [value, setValue] = useState<string[]>(initial);
  return (
    <>
      <EventPicker value={value} onChange={setValue} />
      <output aria-label="value">{JSON.stringify(value)}</output>
    </>
  );
}
const value = () => JSON.parse(screen.getByLabelText('value').textContent ?? '[]') as string[];

describe('event groups', () => {
  it('cover the 28 platform events once each, grouped by prefix in SPEC order', () => {
    const groups = eventGroups();
    expect(groups.map((g) => g.label)).toEqual([
      'Leads',
      'Messages',
      'Conversations',
      'Posts',
      'Campaigns',
      'Workflow runs',
      'Agents',
      'Analytics',
      'Integrations',
      'Approvals',
      'Budget',
    ]);
    expect(groups.flatMap((g) => g.events)).toEqual([...PLATFORM_EVENT_NAMES]);
    expect(PLATFORM_EVENT_NAMES).toHaveLength(28);
  });

  it('keep the canonical order whatever the clicking order, and leave `*` when one event is chosen', () => {
    const posts = eventGroups().find((g) => g.prefix === 'post')!;
    expect(toggleEvent(['post.failed'], 'lead.created')).toEqual(['lead.created', 'post.failed']);
    expect(toggleEvent(['*'], 'lead.created')).toEqual(['lead.created']);
    expect(toggleGroup(['post.created'], posts)).toEqual(['post.created', 'post.approved', 'post.published', 'post.failed']);
    expect(toggleGroup(posts.events, posts)).toEqual([]);
    expect(describeEvents(['*'])).toBe('All events');
    expect(describeEvents(['lead.created'])).toBe('lead.created');
    expect(describeEvents(['lead.created', 'post.failed'])).toBe('2 events');
  });
});

describe('the event picker', () => {
  it('takes a whole group with its box, shows a partly chosen group as mixed, and counts the choice', async () => {
    render(<Harness />);
    expect(screen.getByText('Choose at least one event.')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('checkbox', { name: 'Leads: all events' }));
    expect(value()).toEqual(['lead.created', 'lead.updated', 'lead.qualified', 'lead.replied']);
    await userEvent.click(screen.getByRole('checkbox', { name: 'post.failed' }));
    expect(value()).toEqual(['lead.created', 'lead.updated', 'lead.qualified', 'lead.replied', 'post.failed']);
    expect(screen.getByText('5 of 28 events chosen.')).toBeInTheDocument();
    const posts = screen.getByRole('checkbox', { name: 'Posts: all events' }) as HTMLInputElement;
    expect(posts.indeterminate).toBe(true);
    expect(posts).not.toBeChecked();
    await userEvent.click(within(screen.getByRole('group', { name: 'Leads' })).getByRole('checkbox', { name: 'lead.updated' }));
    expect((screen.getByRole('checkbox', { name: 'Leads: all events' }) as HTMLInputElement).indeterminate).toBe(true);
    await userEvent.click(screen.getByRole('checkbox', { name: 'Leads: all events' }));
    expect(value()).toEqual(['lead.created', 'lead.updated', 'lead.qualified', 'lead.replied', 'post.failed']);
  });

  it('with `*` receives everything: the single events are shown chosen and locked, and unticking it clears the choice', async () => {
    render(<Harness initial={['lead.created']} />);
    await userEvent.click(screen.getByRole('checkbox', { name: /All events \(\*\)/ }));
    expect(value()).toEqual(['*']);
    expect(screen.getByText('Receives every event.')).toBeInTheDocument();
    const single = screen.getByRole('checkbox', { name: 'budget.exceeded' });
    expect(single).toBeChecked();
    expect(single).toBeDisabled();
    expect(screen.getByRole('checkbox', { name: 'Budget: all events' })).toBeDisabled();
    await userEvent.click(screen.getByRole('checkbox', { name: /All events \(\*\)/ }));
    expect(value()).toEqual([]);
    expect(screen.getByRole('checkbox', { name: 'budget.exceeded' })).toBeEnabled();
  });
});
