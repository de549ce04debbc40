DROP INDEX "campaign_recipients_due_idx";--> statement-breakpoint
CREATE INDEX "campaign_recipients_awaiting_idx" ON "campaign_recipients" USING btree ("campaign_id") WHERE awaiting is not null;--> statement-breakpoint
CREATE INDEX "campaign_recipients_due_idx" ON "campaign_recipients" USING btree ("campaign_id","next_send_at","id") WHERE status in ('PENDING', 'ACTIVE') and awaiting is null;