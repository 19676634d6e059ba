ALTER TABLE "webhook_deliveries" ADD COLUMN "failure_reason" text;--> statement-breakpoint
-- Deliveries that failed before reasons were kept: the reason where it can be told (its attempts
-- since it was last queued reached 20; its subscription is disabled), else none.
UPDATE "webhook_deliveries" d SET "failure_reason" = CASE
  WHEN d."attempt_count" - d."requeued_at_attempt" >= 20 THEN 'attempts_exhausted'
  WHEN EXISTS (SELECT 1 FROM "webhook_subscriptions" s WHERE s."id" = d."subscription_id" AND s."status" = 'disabled') THEN 'subscription_disabled'
END
WHERE d."status" = 'failed';
