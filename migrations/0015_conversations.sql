CREATE TABLE "contacts" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"inbox_id" text NOT NULL,
	"address" text NOT NULL,
	"name" text,
	"lead_id" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "conversation_reads" (
	"conversation_id" text NOT NULL,
	"reader_id" text NOT NULL,
	"read_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "conversation_reads_conversation_id_reader_id_pk" PRIMARY KEY("conversation_id","reader_id")
);
--> statement-breakpoint
CREATE TABLE "conversations" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"inbox_id" text NOT NULL,
	"channel" text NOT NULL,
	"contact_id" text NOT NULL,
	"lead_id" text,
	"subject" text,
	"status" text NOT NULL,
	"handled_by" text NOT NULL,
	"assignee_id" text,
	"handoff_reason" text,
	"handoff_at" timestamp (3) with time zone,
	"first_reply_at" timestamp (3) with time zone,
	"last_message_at" timestamp (3) with time zone NOT NULL,
	"opened_at" timestamp (3) with time zone NOT NULL,
	"closed_at" timestamp (3) with time zone,
	"resolved_by" text
);
--> statement-breakpoint
CREATE TABLE "inboxes" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"channel" text NOT NULL,
	"config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"bot" jsonb DEFAULT '{"enabled":false}'::jsonb NOT NULL,
	"credentials_sealed" text,
	"secret_sealed" text,
	"secret_hash" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "messages" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"inbox_id" text NOT NULL,
	"conversation_id" text NOT NULL,
	"direction" text NOT NULL,
	"sender" text NOT NULL,
	"author_id" text,
	"text" text NOT NULL,
	"media_url" text,
	"private" boolean DEFAULT false NOT NULL,
	"status" text NOT NULL,
	"external_id" text,
	"error" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone,
	"locked_until" timestamp (3) with time zone,
	"at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_inbox_id_inboxes_id_fk" FOREIGN KEY ("inbox_id") REFERENCES "public"."inboxes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversation_reads" ADD CONSTRAINT "conversation_reads_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_inbox_id_inboxes_id_fk" FOREIGN KEY ("inbox_id") REFERENCES "public"."inboxes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_inbox_id_inboxes_id_fk" FOREIGN KEY ("inbox_id") REFERENCES "public"."inboxes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "contacts_inbox_address_idx" ON "contacts" USING btree ("inbox_id","address");--> statement-breakpoint
CREATE UNIQUE INDEX "conversations_open_contact_idx" ON "conversations" USING btree ("contact_id") WHERE status = 'OPEN';--> statement-breakpoint
CREATE INDEX "conversations_org_last_idx" ON "conversations" USING btree ("org_id","last_message_at");--> statement-breakpoint
CREATE INDEX "conversations_org_opened_idx" ON "conversations" USING btree ("org_id","opened_at");--> statement-breakpoint
CREATE INDEX "inboxes_org_idx" ON "inboxes" USING btree ("org_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "messages_inbox_external_idx" ON "messages" USING btree ("inbox_id","direction","external_id");--> statement-breakpoint
CREATE INDEX "messages_conversation_idx" ON "messages" USING btree ("conversation_id","at");--> statement-breakpoint
CREATE INDEX "messages_queue_idx" ON "messages" USING btree ("next_attempt_at") WHERE status = 'queued';