import type { WorkflowEdge, WorkflowNode } from '../engine/graph.ts';

export interface Template {
  id: string;
  name: string;
  description: string;
  category: string;
  workflow: { nodes: WorkflowNode[]; edges: WorkflowEdge[]; active?: boolean };
}

// Built-in starting points. URLs point at placeholders to replace after "use"; the workflow is
// created active, so replace them (or PATCH active: false) before real traffic arrives.
export const TEMPLATES: Template[] = [
  {
    id: 'qualify-new-leads-with-ai',
    name: 'Qualify new leads with AI',
    description: 'When a lead is created, a lead-qualifier agent scores it; leads scoring 70 or more are marked QUALIFIED, the others UNQUALIFIED.',
    category: 'leads',
    workflow: {
      nodes: [
        { id: 'trigger', type: 'trigger.event', name: 'New lead', params: { events: ['lead.created'] } },
        {
          id: 'qualify',
          type: 'ai.agent',
          name: 'Qualify',
          params: {
            type: 'LEAD_QUALIFIER',
            task: 'Qualify the lead {{ payload.lead.name }} ({{ payload.lead.email }}, {{ payload.lead.company }}). Give a score from 0 to 100 and a reason.',
          },
        },
        { id: 'good', type: 'flow.if', name: 'Score ≥ 70?', params: { condition: '$number(score) >= 70' } },
        { id: 'qualified', type: 'leads.update', name: 'Mark qualified', params: { leadId: '{{ $input.payload.lead.id }}', status: 'QUALIFIED' } },
        { id: 'unqualified', type: 'leads.update', name: 'Mark unqualified', params: { leadId: '{{ $input.payload.lead.id }}', status: 'UNQUALIFIED' } },
      ],
      edges: [
        { from: 'trigger', to: 'qualify' },
        { from: 'qualify', to: 'good' },
        { from: 'good', to: 'qualified', output: 'true' },
        { from: 'good', to: 'unqualified', output: 'false' },
      ],
    },
  },
  {
    id: 'approve-then-publish-linkedin',
    name: 'Approve, then publish a LinkedIn post',
    description:
      'A content-writer agent drafts a LinkedIn post on the topic given as input ({ topic, integrationId }); a person reviews the draft (edit it under Content before approving, or reject), then it is published through that LinkedIn integration.',
    category: 'content',
    workflow: {
      nodes: [
        { id: 'trigger', type: 'trigger.manual', name: 'Start with { topic, integrationId }' },
        {
          id: 'draft',
          type: 'ai.agent',
          name: 'Draft the post',
          params: { type: 'CONTENT_WRITER', task: 'Write one LinkedIn post (platform LINKEDIN) about: {{ topic }}' },
        },
        {
          id: 'approve',
          type: 'flow.approval',
          name: 'Approve the post',
          params: { title: 'Publish this LinkedIn post?', description: '{{ summary }}', expiresInSeconds: 172800 },
        },
        { id: 'publish', type: 'content.publish', name: 'Publish', params: { postId: '{{ postIds[0] }}', integrationId: '{{ $input.integrationId }}' } },
      ],
      edges: [
        { from: 'trigger', to: 'draft' },
        { from: 'draft', to: 'approve' },
        { from: 'approve', to: 'publish', output: 'approved' },
      ],
    },
  },
  {
    id: 'weekly-report-digest',
    name: 'Weekly report digest',
    description:
      "Every Monday at 09:00 (Europe/Berlin) a report-writer agent summarizes last week's leads and content; the digest is posted to a webhook (e.g. a chat channel).",
    category: 'reports',
    workflow: {
      nodes: [
        { id: 'trigger', type: 'trigger.schedule', name: 'Mondays 09:00', params: { cron: '0 9 * * 1', timezone: 'Europe/Berlin' } },
        {
          id: 'digest',
          type: 'ai.agent',
          name: 'Write the digest',
          params: {
            type: 'REPORT_WRITER',
            task: 'Write a WEEKLY_DIGEST of the last 7 days: new and qualified leads, published posts, costs, and three recommendations.',
          },
        },
        { id: 'post', type: 'utility.webhookOut', name: 'Post the digest', params: { url: 'https://hooks.example.com/weekly-digest', event: 'report.digest' } },
      ],
      edges: [
        { from: 'trigger', to: 'digest' },
        { from: 'digest', to: 'post' },
      ],
    },
  },
  {
    id: 'sync-qualified-leads-to-crm',
    name: 'Sync qualified leads to a CRM webhook',
    description: "When a lead becomes QUALIFIED, it is sent to your CRM's webhook, signed, as event lead.synced.",
    category: 'leads',
    workflow: {
      nodes: [
        { id: 'trigger', type: 'trigger.event', name: 'Lead qualified', params: { events: ['lead.qualified'] } },
        {
          id: 'sync',
          type: 'leads.crmSync',
          name: 'Send to CRM',
          params: { url: 'https://crm.example.com/webhooks/leads', leadId: '{{ payload.lead.id }}' },
          retry: { maxAttempts: 3, backoffSeconds: 60 },
        },
      ],
      edges: [{ from: 'trigger', to: 'sync' }],
    },
  },
  {
    id: 'welcome-new-leads',
    name: 'Welcome message to new leads',
    description: 'When a lead with an email address is created, a welcome message goes out through your messaging gateway and the lead moves to CONTACTED.',
    category: 'messaging',
    workflow: {
      nodes: [
        { id: 'trigger', type: 'trigger.event', name: 'New lead', params: { events: ['lead.created'] } },
        { id: 'hasEmail', type: 'flow.if', name: 'Has an email?', params: { condition: '$exists(payload.lead.email) and payload.lead.email != null' } },
        {
          id: 'welcome',
          type: 'messaging.send',
          name: 'Send welcome',
          params: {
            channel: 'webhook',
            url: 'https://gateway.example.com/messages',
            to: '{{ payload.lead.email }}',
            text: 'Hi {{ $exists(payload.lead.name) and payload.lead.name != null ? payload.lead.name : "there" }}, thanks for your interest! We will be in touch shortly.',
          },
        },
        { id: 'contacted', type: 'leads.update', name: 'Mark contacted', params: { leadId: '{{ $input.payload.lead.id }}', status: 'CONTACTED' } },
      ],
      edges: [
        { from: 'trigger', to: 'hasEmail' },
        { from: 'hasEmail', to: 'welcome', output: 'true' },
        { from: 'welcome', to: 'contacted' },
      ],
    },
  },
  {
    id: 'capture-leads-from-webhook',
    name: 'Capture leads from a form webhook',
    description:
      'A public webhook URL receives form submissions ({ name, email, phone, company }), creates or updates the lead (de-duplicated) with source "webhook", and tags it.',
    category: 'leads',
    workflow: {
      nodes: [
        { id: 'trigger', type: 'trigger.webhook', name: 'Form submission' },
        {
          id: 'upsert',
          type: 'leads.upsert',
          name: 'Create or update lead',
          params: { name: '{{ name }}', email: '{{ email }}', phone: '{{ phone }}', company: '{{ company }}', source: 'webhook', tags: ['inbound'] },
        },
      ],
      edges: [{ from: 'trigger', to: 'upsert' }],
    },
  },
];

export function findTemplate(id: string): Template | undefined {
  return TEMPLATES.find((t) => t.id === id);
}
