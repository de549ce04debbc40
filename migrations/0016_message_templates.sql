ALTER TABLE "messages" ADD COLUMN "template" jsonb;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "auto_reply" boolean DEFAULT false NOT NULL;