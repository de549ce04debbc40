-- Budget alerts are kept per month and limit (CONTRACT §6: once per month and budget; a PUT to
-- another limit is another budget). An alert sent before this change is taken to be about the
-- organization's limit of now, so it is not sent again for it; one whose organization has no limit
-- any more keys nothing (a new limit is a new budget) and goes.
ALTER TABLE "budget_alerts" ADD COLUMN "limit_usd" double precision;--> statement-breakpoint
UPDATE "budget_alerts" AS a SET "limit_usd" = b."monthly_limit_usd" FROM "budgets" AS b WHERE b."org_id" = a."org_id";--> statement-breakpoint
DELETE FROM "budget_alerts" WHERE "limit_usd" IS NULL;--> statement-breakpoint
ALTER TABLE "budget_alerts" ALTER COLUMN "limit_usd" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "budget_alerts" DROP CONSTRAINT "budget_alerts_org_id_scope_period_kind_pk";--> statement-breakpoint
ALTER TABLE "budget_alerts" ADD CONSTRAINT "budget_alerts_org_id_scope_period_kind_limit_usd_pk" PRIMARY KEY("org_id","scope","period","kind","limit_usd");
