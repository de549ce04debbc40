/**
 * Examples of the main resources for the OpenAPI document (components.schemas.<name>.examples).
 * test/openapi.test.ts validates each one against its schema, so they cannot drift from it.
 */
const ORG = 'org_01jd8m3q7k2x9v4n6p5r8s3t2w';
const PROJECT = 'prj_01jd8m3q7m4y8w2c5e7g9j1k3n';
const WORKFLOW = 'wf_01jd8p2v6h3k5m7p9r2t4w6y8z';
const RUN = 'run_01jd8q4x8b2d4f6h8k1m3p5r7t';
const CREATED = '2026-03-02T09:15:04.512Z';

export const RESOURCE_EXAMPLES: Record<string, unknown[]> = {
  Organization: [{ id: ORG, name: 'Acme', createdAt: CREATED, updatedAt: CREATED }],
  Lead: [
    {
      id: 'lead_01jd8n5w2c4e6g8j0m2p4r6t8v',
      projectId: PROJECT,
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      phone: '+442071838750',
      company: 'Analytical Engines Ltd',
      website: 'https://example.com',
      source: 'webinar',
      status: 'QUALIFIED',
      score: 82,
      scoreReason: 'Decision maker at a company of the target size; asked for a demo.',
      tags: ['webinar', 'enterprise'],
      custom: { plan: 'trial' },
      createdAt: CREATED,
      updatedAt: '2026-03-02T09:20:11.003Z',
    },
  ],
  Workflow: [
    {
      id: WORKFLOW,
      projectId: PROJECT,
      name: 'Qualify new leads',
      description: 'Scores every new lead and marks the good ones QUALIFIED.',
      nodes: [
        { id: 'trigger', type: 'trigger.event', name: 'New lead', params: { events: ['lead.created'] } },
        { id: 'good', type: 'flow.if', params: { condition: 'payload.lead.score >= 70' } },
        { id: 'qualified', type: 'leads.update', params: { leadId: '{{ payload.lead.id }}', status: 'QUALIFIED' } },
      ],
      edges: [
        { from: 'trigger', to: 'good' },
        { from: 'good', to: 'qualified', output: 'true' },
      ],
      budgetUsd: 5,
      active: true,
      trigger: { type: 'event', nodeId: 'trigger', events: ['lead.created'] },
      templateId: null,
      version: 3,
      createdAt: CREATED,
      updatedAt: CREATED,
    },
  ],
  RunSummary: [
    {
      id: RUN,
      workflowId: WORKFLOW,
      workflowName: 'Qualify new leads',
      projectId: PROJECT,
      status: 'QUEUED',
      testMode: false,
      input: { leadId: 'lead_01jd8n5w2c4e6g8j0m2p4r6t8v' },
      trigger: { type: 'manual', by: 'user:usr_01jd8m3q7n6z0a2c4e6g8j0m2p' },
      costUsd: 0,
      error: null,
      createdAt: CREATED,
      startedAt: null,
      finishedAt: null,
      wakeAt: null,
    },
  ],
  Run: [
    {
      id: RUN,
      workflowId: WORKFLOW,
      workflowName: 'Qualify new leads',
      projectId: PROJECT,
      status: 'SUCCEEDED',
      testMode: true,
      input: { leadId: 'lead_01jd8n5w2c4e6g8j0m2p4r6t8v' },
      trigger: { type: 'manual', by: 'user:usr_01jd8m3q7n6z0a2c4e6g8j0m2p' },
      costUsd: 0,
      error: null,
      createdAt: CREATED,
      startedAt: '2026-03-02T09:15:04.601Z',
      finishedAt: '2026-03-02T09:15:04.688Z',
      wakeAt: null,
      steps: [
        {
          nodeId: 'trigger',
          status: 'SUCCEEDED',
          attempt: 1,
          startedAt: '2026-03-02T09:15:04.602Z',
          finishedAt: '2026-03-02T09:15:04.604Z',
          durationMs: 2,
          itemCount: 1,
          items: [{ leadId: 'lead_01jd8n5w2c4e6g8j0m2p4r6t8v' }],
          outputs: null,
          error: null,
        },
      ],
    },
  ],
  WebhookEndpoint: [
    {
      id: 'whe_01jd8r6z0d4f6h8k0n2q4s6v8x',
      url: 'https://crm.example.com/hooks/automation',
      events: ['lead.created', 'lead.qualified'],
      projectId: null,
      active: true,
      description: 'CRM sync',
      consecutiveFailures: 0,
      disabledReason: null,
      createdAt: CREATED,
      updatedAt: CREATED,
    },
  ],
  Approval: [
    {
      id: 'apr_01jd8s8b2f6h8k0n2q4s6v8x0z',
      status: 'PENDING',
      title: 'Publish this LinkedIn post?',
      description: 'Draft about the spring webinar',
      projectId: PROJECT,
      runId: RUN,
      nodeId: 'approve',
      payload: [{ postId: 'post_01jd8s8b2f6h8k0n2q4s6v8x1a' }],
      expiresAt: '2026-03-04T09:15:04.512Z',
      decision: null,
      by: null,
      comment: null,
      editedPayload: null,
      resolvedAt: null,
      createdAt: CREATED,
    },
  ],
};
