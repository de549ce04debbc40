ALTER TABLE "analytics_daily" ADD COLUMN "sessions" double precision GENERATED ALWAYS AS ((metrics->>'sessions')::float8) STORED;--> statement-breakpoint
ALTER TABLE "analytics_daily" ADD COLUMN "users" double precision GENERATED ALWAYS AS ((metrics->>'users')::float8) STORED;--> statement-breakpoint
ALTER TABLE "analytics_daily" ADD COLUMN "conversions" double precision GENERATED ALWAYS AS ((metrics->>'conversions')::float8) STORED;--> statement-breakpoint
ALTER TABLE "analytics_daily" ADD COLUMN "clicks" double precision GENERATED ALWAYS AS ((metrics->>'clicks')::float8) STORED;--> statement-breakpoint
ALTER TABLE "analytics_daily" ADD COLUMN "impressions" double precision GENERATED ALWAYS AS ((metrics->>'impressions')::float8) STORED;--> statement-breakpoint
ALTER TABLE "analytics_daily" ADD COLUMN "position_weight" double precision GENERATED ALWAYS AS ((metrics->>'position')::float8 * (metrics->>'impressions')::float8) STORED;