-- An upload's file in pieces of at most 1 MiB, a row each (lib/uploads/file-chunks.ts), where it
-- was one value grown by `bytes || slice`: each append rewrote and recompressed the whole value,
-- and each read of a slice decompressed all of it, so on the embedded database (which runs on
-- the server's thread) a 19 MB file held every other request for seconds. A file stored before is
-- its own chunk 0, read as before.
ALTER TABLE "upload_files" ADD COLUMN "chunk" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "upload_files" ALTER COLUMN "chunk" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "upload_files" DROP CONSTRAINT "upload_files_pkey";--> statement-breakpoint
ALTER TABLE "upload_files" ADD CONSTRAINT "upload_files_upload_id_chunk_pk" PRIMARY KEY("upload_id","chunk");
