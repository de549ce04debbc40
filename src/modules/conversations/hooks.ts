import type { App } from '../../platform/http/types.ts';
import { whatsappHookRoutes } from './whatsapp.ts';
import { telegramHookRoutes } from './telegram.ts';
import { emailHookRoutes } from './email.ts';
import { widgetRoutes } from './web.ts';

/**
 * The providers' public inbound routes (`/api/v1/hooks/<channel>/:inboxId`), one registrar per
 * channel, each in its channel's file: every one verifies its sender by the channel's own rule
 * (platform/inbound.ts: fail closed, raw body kept) and stores before it answers.
 */
export function conversationHookRoutes(app: App): void {
  void app;
  whatsappHookRoutes(app);
  telegramHookRoutes(app);
  emailHookRoutes(app);
  widgetRoutes(app);
}
