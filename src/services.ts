import type { Deps } from './platform/deps.ts';
import { Bus } from './platform/bus.ts';
import { SseStreams } from './platform/sse.ts';
import { Mailer } from './platform/mail.ts';
import { ApiKeysService } from './modules/api-keys/index.ts';
import { Guard } from './modules/auth/index.ts';
import { AuthService } from './modules/auth/index.ts';
import { Dispatcher } from './modules/events/index.ts';
import { OrgStream } from './modules/events/index.ts';
import { EventsService } from './modules/events/index.ts';
import { LeadsService } from './modules/leads/index.ts';
import { NotificationsService } from './modules/notifications/index.ts';
import { OrgsService } from './modules/orgs/index.ts';
import { WebhookDeliverer } from './modules/webhooks/index.ts';
import { WebhooksService } from './modules/webhooks/index.ts';
import { IntegrationsService } from './modules/integrations/index.ts';
import { MediaService } from './modules/media/index.ts';
import { ContentService } from './modules/content/index.ts';
import { Publisher } from './modules/content/index.ts';
import { StatsService } from './modules/stats/index.ts';
import { ApprovalsService } from './modules/workflows/index.ts';
import { RunDriver } from './modules/workflows/index.ts';
import { setExpressionLimits } from './platform/expressions/limits.ts';
import { configureExpressionPool } from './platform/expressions/pool.ts';
import { RunsService } from './modules/workflows/index.ts';
import { Scheduler, SchedulesService } from './modules/workflows/index.ts';
import { WorkflowsService } from './modules/workflows/index.ts';
import './modules/workflows/index.ts';
import { UsageService } from './modules/usage/index.ts';
import { BudgetsService } from './modules/budgets/index.ts';
import { ReportsService } from './modules/reports/index.ts';
import { AgentsService } from './modules/agents/index.ts';
import { InvitationsService } from './modules/invitations/index.ts';
import { ConversationsService } from './modules/conversations/index.ts';
import { OutboundSender } from './modules/conversations/index.ts';
import { ConversationBot } from './modules/conversations/index.ts';
import { CampaignsService } from './modules/campaigns/index.ts';
import { UnsubscribeLinks } from './modules/campaigns/index.ts';
import { AnalyticsService } from './modules/analytics/index.ts';
import { googleIntegrationsToSync } from './modules/integrations/index.ts';
import { SharedRateLimitCounters } from './platform/rate-limit-store.ts';
import { registerQueueGauge } from './platform/metrics.ts';
import { workflowRunsQueue } from './modules/workflows/index.ts';
import { webhookDeliveriesQueue } from './modules/webhooks/index.ts';
import { scheduledPostsQueue } from './modules/content/index.ts';
import { agentRunsQueues } from './modules/agents/index.ts';
import { outboundQueues } from './modules/conversations/index.ts';
import { PlansService } from './modules/plans/index.ts';
import { membersHeld, storedPlan, storePlan } from './modules/orgs/index.ts';
import { leadsHeld } from './modules/leads/index.ts';
import { webhookEndpointsHeld } from './modules/webhooks/index.ts';
import { inboxesHeld } from './modules/conversations/index.ts';
import { workflowRunsStarted } from './modules/workflows/index.ts';
import { agentRunsStarted } from './modules/agents/index.ts';
import { campaignMessagesSent } from './modules/campaigns/index.ts';

/**
 * The composition root: every service, built once from the deps and shared by the routes, the
 * workers and the CLI. The only place that knows them all; every other consumer (a workflow node,
 * an agent tool, the run driver) declares the narrow ports it uses and is handed the real ones here.
 */
export function createServices(deps: Deps) {
  const bus = new Bus(deps.database);
  const orgStream = new OrgStream(deps, { bus });
  /**
   * Plans and quotas (CONTRACT §12); without PLANS every check is a no-op. The counted resources: each
   * limit counts the rows of the module that owns them, through the fragment that module exports.
   */
  const plans = new PlansService(deps, {
    bus,
    orgs: { storedPlan, storePlan },
    counted: {
      held: { leads: leadsHeld, members: membersHeld, webhookEndpoints: webhookEndpointsHeld, inboxes: inboxesHeld },
      started: { runsPerMonth: workflowRunsStarted, agentRunsPerMonth: agentRunsStarted, campaignMessagesPerMonth: campaignMessagesSent },
    },
  });
  const orgs = new OrgsService(deps, { plans });
  /** Outgoing e-mail through SMTP_URL (invitations, password resets). */
  const mailer = new Mailer({ url: deps.config.smtpUrl, from: deps.config.smtpFrom, log: deps.log });
  const auth = new AuthService(deps, { orgs, mail: mailer });
  const invitations = new InvitationsService(deps, { auth, orgs, mailer, plans });
  const apiKeys = new ApiKeysService(deps, { bus });
  const guard = new Guard(deps, { auth, apiKeys, orgs });
  const events = new EventsService(deps, { bus });
  const notifications = new NotificationsService(deps, { orgStream });
  const leads = new LeadsService(deps, { events, orgs, plans });
  const webhooks = new WebhooksService(deps, { orgs, plans });
  const deliverer = new WebhookDeliverer(deps, { webhooks, notifications, orgs });
  const dispatcher = new Dispatcher(deps, { orgStream });
  dispatcher.subscribe('webhooks', (tx, batch) => webhooks.fanOut(tx, batch));
  const integrations = new IntegrationsService(deps, { events, orgs, notifications });
  const media = new MediaService(deps);
  const content = new ContentService(deps, { bus, events, orgs, integrations, media });
  const publisher = new Publisher(deps, { events, notifications, integrations, media });
  const analytics = new AnalyticsService(deps, {
    bus,
    events,
    notifications,
    orgs,
    // The service's rows and tokens, and the integrations module's subquery of those the schedule syncs.
    integrations: {
      row: integrations.row.bind(integrations),
      freshCredentials: integrations.freshCredentials.bind(integrations),
      requireReauth: integrations.requireReauth.bind(integrations),
      googleToSync: googleIntegrationsToSync,
    },
  });
  const stats = new StatsService(deps, { orgs });
  dispatcher.subscribe('stats', (tx, batch) => stats.rollup(tx, batch));
  const approvals = new ApprovalsService(deps, { bus, events, orgStream, notifications });
  const usage = new UsageService(deps);
  const budgets = new BudgetsService(deps, { usage, events, notifications });
  const workflowRuns = new RunsService(deps, { bus, orgStream, events, approvals, budgets });
  const schedules = new SchedulesService(deps);
  const workflows = new WorkflowsService(deps, { bus, orgStream, orgs, schedules, plans });
  const scheduler = new Scheduler(deps, { schedules, workflows });
  // Process-wide: every workflow expression is evaluated under these limits, in one pool of workers.
  setExpressionLimits(deps.config.expressionLimits);
  configureExpressionPool(deps.config.expressionPool);
  dispatcher.subscribe('workflows', (tx, batch) => workflows.onEvents(tx, batch));
  approvals.onResolved((tx, approval) => workflowRuns.onApprovalResolved(tx, approval));
  /** Open SSE connections, capped per credential and organization, closed when the server shuts down. */
  const streams = new SseStreams({ perCredential: deps.config.sseMaxPerCredential, perOrg: deps.config.sseMaxPerOrg });
  // Before the agents (the conversations bot's tools) and the run driver (messaging.send).
  const conversations = new ConversationsService(deps, { bus, orgStream, events, leads, notifications, orgs, plans });
  /** One-click unsubscribe links: the campaigns' e-mail footer and the sender's List-Unsubscribe header are the same link. */
  const links = new UnsubscribeLinks(deps.config);
  const campaigns = new CampaignsService(deps, { events, notifications, orgs, conversations, plans, links });
  // A campaign follows its messages' outcomes (sent, delivered, read, failed) in the transaction that changes them.
  conversations.watchOutbound((tx, rows) => campaigns.onOutbound(tx, rows));
  dispatcher.subscribe('campaigns', (tx, batch) => campaigns.onEvents(tx, batch));
  // Agents write reports (their create_report tool) and a report's run_agent recommendation starts
  // agents: reports is handed the start as a function that reaches the agents when a recommendation is
  // applied, long after both exist.
  const reports = new ReportsService(deps, {
    events,
    notifications,
    leads,
    content,
    workflows,
    agents: { startRun: (scope, request): Promise<unknown> => agents.startRun(scope, request) },
  });
  const agents = new AgentsService(deps, {
    bus,
    orgStream,
    events,
    orgs,
    usage,
    budgets,
    plans,
    tools: { clock: deps.clock, config: deps.config, leads, usage, budgets, reports, content, approvals, conversations, campaigns, stats },
  });
  const runDriver = new RunDriver(
    {
      ...deps,
      bus,
      workflowRuns,
      approvals,
      workflows,
      nodes: {
        clock: deps.clock,
        outbound: { appSecret: deps.config.appSecret, allowPrivate: deps.config.webhookAllowPrivate, timeoutMs: deps.config.webhookTimeoutMs },
        leads,
        content,
        agents,
        conversations,
        campaigns,
      },
    },
    { concurrency: deps.config.workflowConcurrency, leaseMs: deps.config.workflowLeaseMs },
  );
  const conversationBot = new ConversationBot(deps, { bus, turns: agents.turns, conversations });
  dispatcher.subscribe('conversation-bot', (tx, batch) => conversationBot.onEvents(tx, batch));
  const outboundSender = new OutboundSender(deps, { conversations, events, unsubscribe: links });
  const rateLimits = new SharedRateLimitCounters(deps.database, deps.clock);
  // The worker loops' queues on the metrics' queue gauges, each read by the module that owns its rows.
  for (const queue of [workflowRunsQueue, webhookDeliveriesQueue, scheduledPostsQueue, agentRunsQueues, outboundQueues]) registerQueueGauge(queue);
  return {
    ...deps,
    plans,
    rateLimits,
    campaigns,
    bus,
    orgStream,
    orgs,
    mailer,
    invitations,
    auth,
    apiKeys,
    guard,
    events,
    notifications,
    leads,
    webhooks,
    deliverer,
    dispatcher,
    streams,
    integrations,
    media,
    content,
    publisher,
    stats,
    approvals,
    workflowRuns,
    schedules,
    scheduler,
    workflows,
    runDriver,
    usage,
    budgets,
    reports,
    agents,
    conversations,
    outboundSender,
    conversationBot,
    analytics,
  };
}

export type Services = ReturnType<typeof createServices>;

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
}
