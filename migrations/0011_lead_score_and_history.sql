UPDATE "leads" SET "score" = 0 WHERE "score" IS NULL;--> statement-breakpoint
ALTER TABLE "leads" ALTER COLUMN "score" SET DEFAULT 0;--> statement-breakpoint
ALTER TABLE "leads" ALTER COLUMN "score" SET NOT NULL;--> statement-breakpoint
CREATE INDEX "events_lead_idx" ON "events" USING btree ((coalesce("payload"->'lead'->>'id', "payload"->>'leadId')),"id") WHERE ("events"."payload" ? 'lead' or "events"."payload" ? 'leadId');