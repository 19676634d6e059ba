import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { uploads, users } from "./schema";
import { rowsOf, type Db } from "./client";
import { setupTestDatabase } from "../testing/db";
import { readUploadedFile } from "../uploads/file-chunks";

let db: Db;
setupTestDatabase((opened) => {
  db = opened;
});

describe("upload_files.chunk keeps DEFAULT 0 (migration 0023)", () => {
  it("takes a file stored as an older release stores it (one row, no chunk) as chunk 0, read back whole", async () => {
    await db.insert(users).values({ id: "ath_oldrelease", email: "old@example.com", name: "Old", passwordHash: "x" });
    const file = new TextEncoder().encode("<gpx version=\"1.1\"></gpx>");
    await db.insert(uploads).values({ id: "upl_oldrelease", athleteId: "ath_oldrelease", uploader: "athlete", dataType: "gpx", gzip: false, receivedSha256: "r", contentSha256: "c", sizeBytes: file.byteLength });
    // The INSERT of a release from before 0021, which knew no chunk column.
    await db.execute(sql`insert into upload_files (upload_id, bytes) values ('upl_oldrelease', decode(${Buffer.from(file).toString("base64")}, 'base64'))`);
    expect(rowsOf<{ chunk: number }>(await db.execute(sql`select chunk from upload_files where upload_id = 'upl_oldrelease'`))).toEqual([{ chunk: 0 }]);
    const read = await readUploadedFile(db, "upl_oldrelease");
    expect(read && new TextDecoder().decode(read.bytes)).toBe("<gpx version=\"1.1\"></gpx>");
  });
});
