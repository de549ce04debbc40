/** Report types (SPEC "Report"), for the server's checks and the panel's filters alike. */
export const REPORT_TYPES = [
  'CONTENT_PLAN',
  'SOCIAL_PERFORMANCE',
  'LEAD_LIST',
  'LEAD_QUALIFICATION',
  'OUTREACH_SUMMARY',
  'MARKET_RESEARCH',
  'COMPETITOR_ANALYSIS',
  'SEO_AUDIT',
  'TRAFFIC_STRATEGY',
  'ANALYTICS_REVIEW',
  'CAMPAIGN_PLAN',
  'CAMPAIGN_SUMMARY',
  'CHATBOT_INSIGHTS',
  'WEEKLY_DIGEST',
  'GENERAL',
] as const;
export type ReportType = (typeof REPORT_TYPES)[number];
