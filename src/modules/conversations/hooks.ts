import { RATE_LIMIT, routesPlugin } from '../../platform/http/plugin.ts';
import { whatsappHookRoutes } from './whatsapp.ts';
import { telegramHookRoutes } from './telegram.ts';
import { emailHookRoutes } from './email.ts';
import { widgetRoutes, type WidgetRoutesOptions } from './web.ts';

/**
 * The providers' public inbound routes (`/api/v1/hooks/<channel>/:inboxId`), one registrar per
 * channel, each in its channel's file: every one verifies its sender by the channel's own rule
 * (platform/inbound.ts: fail closed, raw body kept) and stores before it answers.
 */
export const conversationHookRoutes = routesPlugin<WidgetRoutesOptions>('conversation-hook-routes', [RATE_LIMIT], (app, options) => {
  whatsappHookRoutes(app, options.conversations);
  telegramHookRoutes(app, options.conversations);
  emailHookRoutes(app, options.conversations);
  widgetRoutes(app, options);
});
