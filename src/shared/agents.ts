/**
 * The built-in agent types (SPEC "Agent"), for the server's checks (the agents' catalog must define
 * exactly these: agents/catalog.ts is typed by them) and for the workflow node that starts one.
 */
export const AGENT_TYPE_NAMES = ['LEAD_QUALIFIER', 'MARKET_ANALYST', 'REPORT_WRITER', 'CONTENT_WRITER', 'CHATBOT', 'CHATBOT_ANALYST'] as const;
export type AgentTypeName = (typeof AGENT_TYPE_NAMES)[number];
