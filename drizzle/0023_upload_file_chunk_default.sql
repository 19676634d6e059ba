-- `upload_files.chunk` gets back the DEFAULT 0 that 0021 dropped: a release from before the
-- pieces inserts an upload's file as one row without a chunk, which is chunk 0 to this one. While
-- such a release still ran beside this one (a rolling deploy) or after a rollback, each of its
-- uploads failed on the NOT NULL column. This release always writes the chunk itself.
ALTER TABLE "upload_files" ALTER COLUMN "chunk" SET DEFAULT 0;
