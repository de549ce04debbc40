import type { Services } from './services.ts';
import { Loop } from './platform/worker.ts';
import { DISPATCHER_WAKE } from './modules/events/index.ts';
import { DELIVERIES_WAKE } from './modules/webhooks/index.ts';
import { PUBLISHER_WAKE } from './modules/content/index.ts';
import { RUNS_WAKE } from './modules/workflows/index.ts';
import { APPROVALS_WAKE } from './modules/workflows/index.ts';
import { AGENTS_WAKE } from './modules/agents/index.ts';
import { OUTBOUND_WAKE } from './modules/conversations/index.ts';
import { BOT_WAKE } from './modules/conversations/index.ts';
import { ANALYTICS_WAKE } from './modules/analytics/index.ts';

/** Webhook delivery lanes per instance (see startWorkers). */
export const DELIVERY_LANES = 2;

export interface Workers {
  loops: Record<string, Loop>;
  stop(): Promise<void>;
  /** While stop() runs: the workers not stopped yet (what a shutdown past its grace was waiting for). */
  stopping(): string[];
}

/**
 * The background workers of one instance. Any number of instances may run them against one
 * PostgreSQL: every round claims its rows with SKIP LOCKED.
 */
export function startWorkers(services: Services): Workers {
  const { log, bus, dispatcher, deliverer } = services;
  // Webhook delivery in overlapping lanes: while one lane's batch is on the wire, another claims
  // and records (each claims its own rows with SKIP LOCKED), so the database round trips of a
  // batch do not leave the connections to the receivers idle.
  const webhookLanes = Object.fromEntries(
    Array.from({ length: DELIVERY_LANES }, (_, i) => [
      i === 0 ? 'webhooks' : `webhooks-${i + 1}`,
      new Loop({ name: 'webhooks', log, idleMs: 1000, run: () => deliverer.round() }),
    ]),
  );
  const wakeDeliveries = () => {
    for (const lane of Object.values(webhookLanes)) lane.wake();
  };
  const loops: Record<string, Loop> = {
    // A short coalescing window lets one round dispatch a burst of commits together.
    dispatcher: new Loop({ name: 'dispatcher', log, idleMs: 1000, coalesceMs: () => dispatcher.coalesceMs(), run: () => dispatcher.round() }),
    ...webhookLanes,
    publisher: new Loop({ name: 'publisher', log, idleMs: services.config.publisherPollMs, run: () => services.publisher.round() }),
    runs: new Loop({ name: 'runs', log, idleMs: services.config.workflowPollMs, run: () => services.runDriver.round() }),
    schedules: new Loop({ name: 'schedules', log, idleMs: services.config.workflowPollMs, run: () => services.scheduler.round() }),
    approvals: new Loop({ name: 'approvals', log, idleMs: services.config.workflowPollMs, run: () => services.approvals.expireDue() }),
    agents: new Loop({ name: 'agents', log, idleMs: 1000, run: () => services.agents.runner.round() }),
    conversations: new Loop({ name: 'conversations-outbound', log, idleMs: 1000, run: () => services.outboundSender.round() }),
    bot: new Loop({ name: 'conversations-bot', log, idleMs: 1000, run: () => services.conversationBot.round() }),
    campaigns: new Loop({ name: 'campaigns', log, idleMs: 1000, run: () => services.campaigns.round() }),
    // Queued analytics syncs, and each google integration's daily run at ANALYTICS_SYNC_HOUR (checked once a minute).
    analytics: new Loop({ name: 'analytics-sync', log, idleMs: 5000, run: () => services.analytics.sync.round() }),
    // OAuth access tokens that expire within 10 minutes are refreshed ahead of use.
    oauthRefresh: new Loop({ name: 'oauth-refresh', log, idleMs: 60_000, run: () => services.integrations.refreshDue() }),
    maintenance: new Loop({
      name: 'maintenance',
      log,
      idleMs: 3_600_000,
      run: async () => {
        await deliverer.purge();
        await bus.purge(new Date(services.clock.now().getTime() - 3_600_000));
        // OAuth authorizations started and never finished (their state expired).
        await services.integrations.purgeStates();
        // Rate-limit windows that ended (their counters start afresh on the next request anyway).
        await services.rateLimits.purge();
        return false;
      },
    }),
  };
  const unsubscribe = [
    bus.subscribe(DISPATCHER_WAKE, () => loops.dispatcher!.wake()),
    bus.subscribe(DELIVERIES_WAKE, wakeDeliveries),
    bus.subscribe(PUBLISHER_WAKE, () => loops.publisher!.wake()),
    bus.subscribe(RUNS_WAKE, () => loops.runs!.wake()),
    bus.subscribe(APPROVALS_WAKE, () => loops.approvals!.wake()),
    bus.subscribe(AGENTS_WAKE, () => loops.agents!.wake()),
    bus.subscribe(OUTBOUND_WAKE, () => loops.conversations!.wake()),
    // A requested turn, or a finished agent run (the conversation's next turn may start).
    bus.subscribe(BOT_WAKE, () => loops.bot!.wake()),
    bus.subscribe(AGENTS_WAKE, () => loops.bot!.wake()),
    bus.subscribe(ANALYTICS_WAKE, () => loops.analytics!.wake()),
  ];
  dispatcher.onDispatched(wakeDeliveries);
  // A campaign started, a reply or an outcome may leave work for the campaign runner.
  dispatcher.onDispatched(() => loops.campaigns!.wake());
  for (const loop of Object.values(loops)) loop.start();
  const pending = new Set<string>();
  const stopOne = async (name: string, stop: () => Promise<void>) => {
    pending.add(name);
    await stop();
    pending.delete(name);
  };
  return {
    loops,
    stop: async () => {
      for (const off of unsubscribe) off();
      await Promise.all(Object.entries(loops).map(([name, l]) => stopOne(name, () => l.stop())));
      await stopOne('workflow runs in flight', () => services.runDriver.stop());
      await stopOne('agent runs in flight', () => services.agents.runner.stop());
    },
    stopping: () => [...pending],
  };
}
