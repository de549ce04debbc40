/** The editor's shortcuts: Ctrl+S saves, Ctrl+D duplicates, Ctrl+Z / Ctrl+Shift+Z (Ctrl+Y) undo and redo, Delete removes. */
import { useEffect, useEffectEvent, type Dispatch } from 'react';
import type { HistoryAction } from '../history';

function inField(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || !el.tagName) return false;
  return el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName);
}

export function useEditorKeyboard({
  readOnly,
  save,
  duplicateSelection,
  removeSelection,
  dispatch,
}: {
  readOnly: boolean;
  save: () => void;
  duplicateSelection: () => void;
  removeSelection: () => void;
  dispatch: Dispatch<HistoryAction>;
}) {
  const onKey = useEffectEvent((event: KeyboardEvent) => {
    if (document.querySelector('[role="dialog"]')) return;
    const mod = event.ctrlKey || event.metaKey;
    const key = event.key.toLowerCase();
    const typing = inField(event.target);
    if (mod && key === 's') {
      event.preventDefault();
      save();
      return;
    }
    if (readOnly) return;
    if (mod && key === 'd') {
      event.preventDefault();
      if (!typing) duplicateSelection();
      return;
    }
    if (typing) return;
    if (mod && (key === 'y' || (key === 'z' && event.shiftKey))) {
      event.preventDefault();
      dispatch({ kind: 'redo' });
    } else if (mod && key === 'z') {
      event.preventDefault();
      dispatch({ kind: 'undo' });
    } else if (!mod && (event.key === 'Delete' || event.key === 'Backspace')) {
      event.preventDefault();
      removeSelection();
    }
  });
  useEffect(() => {
    const listener = (event: KeyboardEvent) => onKey(event);
    window.addEventListener('keydown', listener);
    return () => window.removeEventListener('keydown', listener);
  }, []);
}
