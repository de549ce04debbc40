/**
 * The usage page's groups (GET …/usage): named for people (a workflow's or project's name, not its
 * id) and sorted as the URL says. The API answers every group at once, so sorting is done here.
 */
export const GROUP_BY = ['model', 'day', 'agentType', 'workflow', 'project'] as const;
export type GroupBy = (typeof GROUP_BY)[number];
export const GROUP_LABELS: Record<GroupBy, string> = { model: 'Model', day: 'Day', agentType: 'Agent type', workflow: 'Workflow', project: 'Project' };

export const GROUP_SORTS = ['key', 'runs', 'inputTokens', 'outputTokens', 'costUsd'] as const;
export type GroupSort = (typeof GROUP_SORTS)[number];

export interface Group {
  key: string | null;
  runs: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** What a group's key means, in words. */
export function groupLabel(groupBy: GroupBy, key: string | null, names: { workflows?: Map<string, string>; projects?: Map<string, string> } = {}): string {
  if (key === null || key === '') {
    return groupBy === 'workflow' ? 'Not in a workflow' : groupBy === 'project' ? 'No project' : groupBy === 'agentType' ? 'No agent' : 'Unknown';
  }
  switch (groupBy) {
    case 'workflow':
      return names.workflows?.get(key) ?? key;
    case 'project':
      return names.projects?.get(key) ?? key;
    case 'agentType': {
      const words = key.toLowerCase().split('_');
      return words.map((w, i) => (i === 0 ? w.charAt(0).toUpperCase() + w.slice(1) : w)).join(' ');
    }
    default:
      return key;
  }
}

/**
 * Groups in the URL's order (`field` or `-field`): by label for `key` (days in date order), else by
 * the number; ties keep the label order so the table does not jump.
 */
export function sortGroups<T extends Group & { label: string }>(groups: readonly T[], sort: string | undefined, groupBy: GroupBy): T[] {
  const desc = sort?.startsWith('-') ?? true;
  const field = (sort?.replace(/^-/, '') ?? 'costUsd') as GroupSort;
  const byLabel = (a: T, b: T) => (groupBy === 'day' ? (a.key ?? '').localeCompare(b.key ?? '') : a.label.localeCompare(b.label));
  const out = [...groups];
  out.sort((a, b) => {
    const primary = field === 'key' ? byLabel(a, b) : (a[field] as number) - (b[field] as number);
    return (desc ? -primary : primary) || byLabel(a, b);
  });
  return out;
}

/** The first day of this month and today, in UTC (the usage API reads dates as UTC days). */
export function thisMonth(now: Date): { from: string; to: string } {
  const to = now.toISOString().slice(0, 10);
  return { from: `${to.slice(0, 8)}01`, to };
}

/** The previous calendar month, in UTC. */
export function lastMonth(now: Date): { from: string; to: string } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0));
  return { from: start.toISOString().slice(0, 10), to: end.toISOString().slice(0, 10) };
}
