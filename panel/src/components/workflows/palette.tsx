import { memo, useId, useMemo, useState } from 'react';
import { CATEGORY_LABEL, defaultName, paletteGroups, type NodeTypeInfo } from './canvas-model';
import { lookOf, PALETTE_DRAG_TYPE } from './canvas';

/**
 * The node palette (GET …/node-types): a search over names, types and descriptions, the types
 * grouped by category with what each does. Click one to add it (after the selected step, connected
 * to it when that step has a single output), or drag it onto the canvas.
 */
export const Palette = memo(function Palette({
  types,
  onAdd,
  disabled,
}: {
  types: readonly NodeTypeInfo[];
  onAdd: (type: string) => void;
  disabled?: boolean;
}) {
  const [query, setQuery] = useState('');
  const groups = useMemo(() => paletteGroups(types, query), [types, query]);
  const searchId = useId();
  return (
    <aside aria-label="Node palette" className="flex h-full min-h-0 flex-col">
      <div className="border-b border-slate-200 p-3">
        <label htmlFor={searchId} className="mb-1 block text-xs font-semibold tracking-wide text-slate-500 uppercase">
          Add a step
        </label>
        <input
          id={searchId}
          type="search"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          placeholder="Search nodes"
          aria-label="Search nodes"
          className="block w-full rounded-md border-0 px-2.5 py-1.5 text-sm ring-1 ring-slate-300 placeholder:text-slate-400 focus:ring-2 focus:ring-indigo-600"
        />
      </div>
      <div className="min-h-0 flex-1 space-y-4 overflow-y-auto p-3">
        {groups.length === 0 ? <p className="text-sm text-slate-500">No node matches “{query}”.</p> : null}
        {groups.map((group) => (
          <section key={group.category} aria-label={CATEGORY_LABEL[group.category] ?? group.category}>
            <h3 className="mb-1.5 text-xs font-semibold tracking-wide text-slate-500 uppercase">{CATEGORY_LABEL[group.category] ?? group.category}</h3>
            <ul className="space-y-1">
              {group.types.map((t) => {
                const look = lookOf(t.type);
                const Icon = look.icon;
                return (
                  <li key={t.type}>
                    <button
                      type="button"
                      disabled={disabled}
                      draggable={!disabled}
                      onDragStart={(e) => {
                        e.dataTransfer.setData(PALETTE_DRAG_TYPE, t.type);
                        e.dataTransfer.effectAllowed = 'copy';
                      }}
                      onClick={() => onAdd(t.type)}
                      aria-label={`Add ${defaultName(t.type)} (${t.type})`}
                      className="group flex w-full items-start gap-2 rounded-md p-1.5 text-left hover:bg-slate-100 disabled:cursor-not-allowed disabled:opacity-50"
                    >
                      <span aria-hidden="true" className={`mt-0.5 flex size-6 shrink-0 items-center justify-center rounded ${look.tone}`}>
                        <Icon className="size-3.5" />
                      </span>
                      <span className="min-w-0">
                        <span className="block text-sm font-medium text-slate-800">
                          {defaultName(t.type)} <span className="font-mono text-[11px] font-normal text-slate-400">{t.type}</span>
                        </span>
                        <span className="line-clamp-2 text-xs text-slate-500">{t.description.replace(/`/g, '')}</span>
                      </span>
                    </button>
                  </li>
                );
              })}
            </ul>
          </section>
        ))}
      </div>
    </aside>
  );
});
