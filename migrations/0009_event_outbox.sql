CREATE TABLE "event_outbox" (
	"id" text PRIMARY KEY NOT NULL
);
--> statement-breakpoint
INSERT INTO "event_outbox" ("id") SELECT "id" FROM "events" WHERE "dispatched_at" IS NULL;--> statement-breakpoint
DROP INDEX "events_undispatched_idx";--> statement-breakpoint
ALTER TABLE "events" DROP COLUMN "dispatched_at";
