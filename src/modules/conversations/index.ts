/**
 * The conversations module's public face: the only file of it that other modules and the composition root
 * (services.ts, app.ts, workers.ts, the CLI) import. What is not exported here is the module's own.
 */
export { BOT_WAKE, ConversationBot } from './bot.ts';
export { inboxesHeld } from './counts.ts';
export { outboundQueues } from './gauges.ts';
export { conversationHookRoutes } from './hooks.ts';
export { type InboxRow } from './inboxes.ts';
export { contactAddressOfLead } from './queries.ts';
export { conversationRoutes } from './routes.ts';
export { MessageTemplateInput } from './schemas.ts';
export { OutboundSender } from './sender.ts';
export { ConversationsService } from './service.ts';
export { OUTBOUND_WAKE } from './threads.ts';
