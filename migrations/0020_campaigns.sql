CREATE TABLE "campaign_rate" (
	"campaign_id" text NOT NULL,
	"second" bigint NOT NULL,
	"sent" integer NOT NULL,
	CONSTRAINT "campaign_rate_campaign_id_second_pk" PRIMARY KEY("campaign_id","second")
);
--> statement-breakpoint
CREATE TABLE "campaign_recipients" (
	"id" text PRIMARY KEY NOT NULL,
	"campaign_id" text NOT NULL,
	"org_id" text NOT NULL,
	"lead_id" text NOT NULL,
	"address" text,
	"status" text NOT NULL,
	"skip_reason" text,
	"step" integer DEFAULT 0 NOT NULL,
	"next_send_at" timestamp (3) with time zone,
	"awaiting" text,
	"sent_at" timestamp (3) with time zone,
	"delivered_at" timestamp (3) with time zone,
	"read_at" timestamp (3) with time zone,
	"replied_at" timestamp (3) with time zone,
	"failed_at" timestamp (3) with time zone,
	"error" text
);
--> statement-breakpoint
CREATE TABLE "campaign_sends" (
	"recipient_id" text NOT NULL,
	"step" integer NOT NULL,
	"campaign_id" text NOT NULL,
	"message_id" text,
	"subject" text,
	"text" text NOT NULL,
	"at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "campaign_sends_recipient_id_step_pk" PRIMARY KEY("recipient_id","step")
);
--> statement-breakpoint
CREATE TABLE "campaigns" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"inbox_id" text NOT NULL,
	"channel" text NOT NULL,
	"audience" jsonb NOT NULL,
	"steps" jsonb NOT NULL,
	"settings" jsonb NOT NULL,
	"status" text NOT NULL,
	"scheduled_at" timestamp (3) with time zone,
	"test_mode" boolean DEFAULT false NOT NULL,
	"total" integer DEFAULT 0 NOT NULL,
	"errors_in_row" integer DEFAULT 0 NOT NULL,
	"paused_reason" text,
	"day" text,
	"day_sent" integer DEFAULT 0 NOT NULL,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "lead_consents" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"lead_id" text NOT NULL,
	"channel" text NOT NULL,
	"status" text NOT NULL,
	"source" text,
	"text" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "suppressions" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"channel" text NOT NULL,
	"address" text NOT NULL,
	"reason" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "campaign_rate" ADD CONSTRAINT "campaign_rate_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_recipients" ADD CONSTRAINT "campaign_recipients_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_sends" ADD CONSTRAINT "campaign_sends_recipient_id_campaign_recipients_id_fk" FOREIGN KEY ("recipient_id") REFERENCES "public"."campaign_recipients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "campaign_recipients_lead_idx" ON "campaign_recipients" USING btree ("campaign_id","lead_id");--> statement-breakpoint
CREATE INDEX "campaign_recipients_status_idx" ON "campaign_recipients" USING btree ("campaign_id","status","id");--> statement-breakpoint
CREATE INDEX "campaign_recipients_due_idx" ON "campaign_recipients" USING btree ("campaign_id","next_send_at") WHERE status in ('PENDING', 'ACTIVE') and awaiting is null;--> statement-breakpoint
CREATE INDEX "campaign_recipients_of_lead_idx" ON "campaign_recipients" USING btree ("lead_id") WHERE status in ('PENDING', 'ACTIVE');--> statement-breakpoint
CREATE INDEX "campaign_sends_message_idx" ON "campaign_sends" USING btree ("message_id");--> statement-breakpoint
CREATE INDEX "campaigns_org_idx" ON "campaigns" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE INDEX "campaigns_active_idx" ON "campaigns" USING btree ("status","scheduled_at") WHERE status in ('RUNNING', 'SCHEDULED');--> statement-breakpoint
CREATE INDEX "lead_consents_lead_idx" ON "lead_consents" USING btree ("lead_id","channel","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "suppressions_address_idx" ON "suppressions" USING btree ("org_id","channel","address");