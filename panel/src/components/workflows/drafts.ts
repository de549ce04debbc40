/**
 * Unsaved edits kept in this browser (localStorage), one draft per workflow (or one for a new
 * workflow), so a reload or a closed tab loses nothing; saving clears it. A draft remembers the
 * version it was made on, so a draft of an older version is told apart.
 */
import type { DefEdge, DefNode } from './definition';
import type { WorkflowMeta } from './canvas-model';

export interface Draft {
  savedAt: string;
  /** The workflow version the edits started from (none for a new workflow). */
  baseVersion: number | null;
  /** The template a new workflow was opened from. */
  templateId?: string;
  meta: WorkflowMeta;
  nodes: DefNode[];
  edges: DefEdge[];
}

const PREFIX = 'workflow-draft';

export const draftKey = (orgId: string, workflowId: string | null) => `${PREFIX}:${orgId}:${workflowId ?? 'new'}`;

export function readDraft(key: string): Draft | null {
  try {
    const text = localStorage.getItem(key);
    if (!text) return null;
    const value = JSON.parse(text) as Partial<Draft>;
    if (!value || typeof value !== 'object' || !Array.isArray(value.nodes) || !Array.isArray(value.edges) || !value.meta || typeof value.meta.name !== 'string')
      return null;
    return {
      savedAt: typeof value.savedAt === 'string' ? value.savedAt : new Date(0).toISOString(),
      baseVersion: typeof value.baseVersion === 'number' ? value.baseVersion : null,
      templateId: typeof value.templateId === 'string' ? value.templateId : undefined,
      meta: { name: value.meta.name, description: String(value.meta.description ?? ''), budgetUsd: String(value.meta.budgetUsd ?? '') },
      nodes: value.nodes,
      edges: value.edges,
    };
  } catch {
    return null;
  }
}

/** Keeps the draft; false when the browser refused (storage full or disabled). */
export function writeDraft(key: string, draft: Draft): boolean {
  try {
    localStorage.setItem(key, JSON.stringify(draft));
    return true;
  } catch {
    return false;
  }
}

export function clearDraft(key: string): void {
  try {
    localStorage.removeItem(key);
  } catch {
    // Nothing kept, nothing to clear.
  }
}

/** The comparable content of a draft or a saved workflow: settings and definition. */
export function contentKey(content: { meta: WorkflowMeta; nodes: readonly unknown[]; edges: readonly unknown[] }): string {
  return JSON.stringify([content.meta.name, content.meta.description, content.meta.budgetUsd, content.nodes, content.edges]);
}
