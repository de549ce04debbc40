-- An authorization in progress is bound to the browser that started it (flow-cookie.ts): the hash
-- of the secret in that browser's cookie. The ones started before this change have no such cookie
-- and could not be completed any more: they are dropped (they live 10 minutes at most) instead of
-- keeping the column nullable for them.
DELETE FROM "oauth_states";--> statement-breakpoint
ALTER TABLE "oauth_states" ADD COLUMN "browser_hash" text NOT NULL;
