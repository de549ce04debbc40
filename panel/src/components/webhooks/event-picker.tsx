import { useEffect, useRef } from 'react';
import { ALL, eventGroups, groupState, isAll, toggleEvent, toggleGroup, type Selection } from './events';

const GROUPS = eventGroups();

/**
 * The events an endpoint receives: every event (`*`, including ones added later), or a choice of the
 * 28 platform events grouped by prefix, each group with a box that takes or drops it whole.
 */
export function EventPicker({
  value,
  onChange,
  disabled,
  error,
}: {
  value: Selection;
  onChange: (next: string[]) => void;
  disabled?: boolean;
  error?: string;
}) {
  const all = isAll(value);
  const count = all ? 0 : value.length;
  return (
    <fieldset className="space-y-3" aria-describedby="event-picker-summary">
      <legend className="text-sm font-medium text-slate-700">Events</legend>
      <label className="flex items-start gap-2 rounded-md bg-slate-50 p-3 text-sm ring-1 ring-slate-200">
        <input type="checkbox" className="mt-0.5 size-4" checked={all} disabled={disabled} onChange={() => onChange(all ? [] : [ALL])} />
        <span>
          <span className="font-medium text-slate-800">All events (*)</span>
          <span className="block text-xs text-slate-500">Every event, including ones added in later versions.</span>
        </span>
      </label>
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-2 lg:grid-cols-3">
        {GROUPS.map((group) => (
          <div key={group.prefix} role="group" aria-label={group.label} className="rounded-md p-3 ring-1 ring-slate-200">
            <GroupBox label={group.label} state={groupState(value, group)} disabled={disabled || all} onChange={() => onChange(toggleGroup(value, group))} />
            <ul className="mt-2 space-y-1 pl-6">
              {group.events.map((name) => (
                <li key={name}>
                  <label className="inline-flex items-center gap-2 font-mono text-xs text-slate-700">
                    <input
                      type="checkbox"
                      className="size-3.5"
                      checked={all || value.includes(name)}
                      disabled={disabled || all}
                      onChange={() => onChange(toggleEvent(value, name))}
                    />
                    {name}
                  </label>
                </li>
              ))}
            </ul>
          </div>
        ))}
      </div>
      <p id="event-picker-summary" className={`text-xs ${error || (!all && count === 0) ? 'text-red-600' : 'text-slate-500'}`}>
        {error ??
          (all
            ? 'Receives every event.'
            : count === 0
              ? 'Choose at least one event.'
              : `${count} of ${GROUPS.reduce((n, g) => n + g.events.length, 0)} events chosen.`)}
      </p>
    </fieldset>
  );
}

function GroupBox({ label, state, disabled, onChange }: { label: string; state: 'all' | 'some' | 'none'; disabled?: boolean; onChange: () => void }) {
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (ref.current) ref.current.indeterminate = state === 'some';
  }, [state]);
  return (
    <label className="inline-flex items-center gap-2 text-sm font-medium text-slate-800">
      <input
        ref={ref}
        type="checkbox"
        className="size-4"
        aria-label={`${label}: all events`}
        checked={state === 'all'}
        disabled={disabled}
        onChange={onChange}
      />
      {label}
    </label>
  );
}
