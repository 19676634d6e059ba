CREATE TABLE "activity_laps" (
	"activity_id" text NOT NULL,
	"index" integer NOT NULL,
	"start_offset_s" double precision NOT NULL,
	"elapsed_time_s" double precision NOT NULL,
	"moving_time_s" double precision,
	"distance_m" double precision,
	"elevation_gain_m" double precision,
	"average_speed_mps" double precision,
	"max_speed_mps" double precision,
	"average_heart_rate_hz" double precision,
	"max_heart_rate_hz" double precision,
	"average_power_w" double precision,
	CONSTRAINT "activity_laps_activity_id_index_pk" PRIMARY KEY("activity_id","index")
);
--> statement-breakpoint
CREATE TABLE "activity_streams" (
	"activity_id" text PRIMARY KEY NOT NULL,
	"size" integer NOT NULL,
	"keys" text[] NOT NULL,
	"data" "bytea" NOT NULL
);
--> statement-breakpoint
CREATE TABLE "upload_files" (
	"upload_id" text PRIMARY KEY NOT NULL,
	"bytes" "bytea" NOT NULL
);
--> statement-breakpoint
CREATE TABLE "uploads" (
	"id" text PRIMARY KEY NOT NULL,
	"athlete_id" text NOT NULL,
	"uploader" text NOT NULL,
	"external_id" text,
	"status" text DEFAULT 'processing' NOT NULL,
	"data_type" text NOT NULL,
	"file_name" text,
	"name_override" text,
	"sport_type_override" text,
	"gzip" boolean NOT NULL,
	"received_sha256" text NOT NULL,
	"content_sha256" text NOT NULL,
	"size_bytes" integer NOT NULL,
	"error_code" text,
	"error_detail" text,
	"activity_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"duplicate_of" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"claimed_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "activities" ADD COLUMN "upload_id" text;--> statement-breakpoint
ALTER TABLE "activity_laps" ADD CONSTRAINT "activity_laps_activity_id_activities_id_fk" FOREIGN KEY ("activity_id") REFERENCES "public"."activities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "activity_streams" ADD CONSTRAINT "activity_streams_activity_id_activities_id_fk" FOREIGN KEY ("activity_id") REFERENCES "public"."activities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "upload_files" ADD CONSTRAINT "upload_files_upload_id_uploads_id_fk" FOREIGN KEY ("upload_id") REFERENCES "public"."uploads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "uploads" ADD CONSTRAINT "uploads_athlete_id_users_id_fk" FOREIGN KEY ("athlete_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "uploads_external_id_idx" ON "uploads" USING btree ("athlete_id","uploader","external_id") WHERE "uploads"."external_id" is not null;--> statement-breakpoint
CREATE INDEX "uploads_content_idx" ON "uploads" USING btree ("athlete_id","content_sha256");--> statement-breakpoint
CREATE INDEX "uploads_processing_idx" ON "uploads" USING btree ("created_at") WHERE "uploads"."status" = 'processing';