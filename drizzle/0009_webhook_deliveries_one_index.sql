CREATE UNIQUE INDEX "webhook_deliveries_sub_seq_idx" ON "webhook_deliveries" USING btree ("subscription_id","event_seq");--> statement-breakpoint
DROP INDEX "webhook_deliveries_event_sub_idx";--> statement-breakpoint
DROP INDEX "webhook_deliveries_sub_idx";
