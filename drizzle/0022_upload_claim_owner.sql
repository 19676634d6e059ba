-- Each claim of an upload carries its own id (lib/uploads/claim-uploads.ts): a processor renews,
-- shortens or gives back only its own claim, so one whose lease lapsed while another took the
-- upload no longer cut the other's claim short (letting a third take the upload at once) or
-- counted its failure against it.
ALTER TABLE "uploads" ADD COLUMN "claim_id" text;
