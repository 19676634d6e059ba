-- The two large values (an activity's encoded streams, an upload's original file) are compressed
-- with lz4 where the server has it: storing a 4-hour ride's 240 KB streams took 7-10 ms with the
-- default pglz and 2.4-4.5 ms with lz4, which also compressed it slightly better (166.7 KB
-- against 169.5 KB) and decompresses faster (README "Benchmarks"). A server built without lz4
-- (PGlite) keeps pglz. Values already stored keep the method they were written with.
DO $$
BEGIN
  ALTER TABLE "activity_streams" ALTER COLUMN "data" SET COMPRESSION lz4;
  ALTER TABLE "upload_files" ALTER COLUMN "bytes" SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  NULL;
END $$;
