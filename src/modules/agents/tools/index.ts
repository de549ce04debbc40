import { Type } from 'typebox';
import { createContentDraft } from './content.ts';
import { CONVERSATION_TOOLS } from './conversations.ts';
import { campaignStats } from './campaigns.ts';
import { analyticsSummary } from './analytics.ts';
import { getLead, leadStats, qualifyLead, searchLeads, updateLead } from './leads.ts';
import { requestApproval } from './approvals.ts';
import { createReport } from './reports.ts';
import { usageSummary } from './usage.ts';
import { fetchWebPage } from './web.ts';
import { HANDOFF_TOOL, type ToolDef } from './types.ts';

/** The handoff tool's schema: its `to` is limited to the other agent types by the loop. */
export const handoffTool: Omit<ToolDef, 'execute'> = {
  name: HANDOFF_TOOL,
  description: 'Hand the run over to another agent type, which continues in this same run with its own tools. Give it the task and what you found.',
  input: Type.Object(
    {
      to: Type.String({ minLength: 1, maxLength: 64 }),
      task: Type.String({ minLength: 1, maxLength: 4000 }),
      context: Type.Optional(Type.String({ maxLength: 8000 })),
    },
    { additionalProperties: false },
  ),
};

export const TOOLS: Record<string, ToolDef> = Object.fromEntries(
  [
    searchLeads,
    getLead,
    updateLead,
    qualifyLead,
    leadStats,
    usageSummary,
    createReport,
    fetchWebPage,
    createContentDraft,
    requestApproval,
    ...CONVERSATION_TOOLS,
    campaignStats,
    analyticsSummary,
  ].map((t) => [t.name, t]),
);
