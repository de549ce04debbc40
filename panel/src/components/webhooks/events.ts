import { PLATFORM_EVENT_NAMES } from '../../../../src/shared/event-names.ts';

/** What a webhook endpoint subscribes to: event names, or `['*']` for every event (now and later). */
export type Selection = readonly string[];

export const ALL = '*';

const LABELS: Record<string, string> = {
  lead: 'Leads',
  message: 'Messages',
  conversation: 'Conversations',
  post: 'Posts',
  campaign: 'Campaigns',
  workflow: 'Workflow runs',
  agent: 'Agents',
  analytics: 'Analytics',
  integration: 'Integrations',
  approval: 'Approvals',
  budget: 'Budget',
};

export interface EventGroup {
  prefix: string;
  label: string;
  events: string[];
}

/** The platform events grouped by their prefix (`lead.created` → lead), in the order SPEC lists them. */
export function eventGroups(names: readonly string[] = PLATFORM_EVENT_NAMES): EventGroup[] {
  const groups = new Map<string, EventGroup>();
  for (const name of names) {
    const prefix = name.split('.')[0]!;
    let group = groups.get(prefix);
    if (!group) {
      group = { prefix, label: LABELS[prefix] ?? prefix.charAt(0).toUpperCase() + prefix.slice(1), events: [] };
      groups.set(prefix, group);
    }
    group.events.push(name);
  }
  return [...groups.values()];
}

export function isAll(selection: Selection): boolean {
  return selection.includes(ALL);
}

/** Keeps the canonical order, so the stored list reads like the picker. */
function ordered(names: Iterable<string>): string[] {
  const set = new Set(names);
  return PLATFORM_EVENT_NAMES.filter((n) => set.has(n));
}

export function toggleEvent(selection: Selection, name: string): string[] {
  const set = new Set(selection.filter((n) => n !== ALL));
  if (set.has(name)) set.delete(name);
  else set.add(name);
  return ordered(set);
}

/** A group's box: all of the group when any of it is missing, none of it when all are there. */
export function toggleGroup(selection: Selection, group: EventGroup): string[] {
  const set = new Set(selection.filter((n) => n !== ALL));
  const full = group.events.every((n) => set.has(n));
  for (const n of group.events) {
    if (full) set.delete(n);
    else set.add(n);
  }
  return ordered(set);
}

export function groupState(selection: Selection, group: EventGroup): 'all' | 'some' | 'none' {
  if (isAll(selection)) return 'all';
  const count = group.events.filter((n) => selection.includes(n)).length;
  return count === 0 ? 'none' : count === group.events.length ? 'all' : 'some';
}

/** "All events", "lead.created", or "3 events". */
export function describeEvents(events: readonly string[]): string {
  if (isAll(events)) return 'All events';
  if (events.length === 1) return events[0]!;
  return `${events.length} events`;
}
