CREATE TABLE "stats_hourly" (
	"org_id" text NOT NULL,
	"project_id" text DEFAULT '' NOT NULL,
	"type" text NOT NULL,
	"hour" timestamp (3) with time zone NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "stats_hourly_org_id_type_hour_project_id_pk" PRIMARY KEY("org_id","type","hour","project_id")
);
