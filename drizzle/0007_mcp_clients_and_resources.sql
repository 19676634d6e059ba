ALTER TABLE "oauth_clients" ADD COLUMN "registration" text DEFAULT 'console' NOT NULL;--> statement-breakpoint
ALTER TABLE "oauth_clients" ADD COLUMN "source_host" text;--> statement-breakpoint
ALTER TABLE "oauth_clients" ADD COLUMN "metadata_fetched_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "oauth_clients" ADD COLUMN "metadata_expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "oauth_codes" ADD COLUMN "resource" text DEFAULT 'v1' NOT NULL;--> statement-breakpoint
ALTER TABLE "oauth_grants" ADD COLUMN "last_used_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "oauth_token_families" ADD COLUMN "resource" text DEFAULT 'v1' NOT NULL;