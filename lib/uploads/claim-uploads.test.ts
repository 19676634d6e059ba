import { describe, expect, it } from "vitest";
import { eq, gt, sql } from "drizzle-orm";
import { users, uploads } from "../db/schema";
import type { Db } from "../db/client";
import { setupTestDatabase } from "../testing/db";
import { claimUploads, deferUploadClaim, listProcessingUploads, releaseUploadClaim, renewUploadClaim } from "./claim-uploads";

/**
 * A claim takes exactly the uploads it answers. Written as `UPDATE … WHERE id IN (SELECT …
 * LIMIT n FOR UPDATE SKIP LOCKED)`, PostgreSQL updated more rows than the limit on a busy table:
 * the extra ones had their attempt counted and their lease set, yet no processor held them, and
 * after three lapsed leases good files ended failed (seen under a burst of 100 uploads).
 */
let db: Db;
setupTestDatabase(async (opened) => {
  db = opened;
  await db.insert(users).values({ id: "ath_claims", email: "claims@example.com", name: "Claims", passwordHash: "x" });
  await db.insert(uploads).values(
    Array.from({ length: 200 }, (_, i) => ({
      id: `upl_claim${String(i).padStart(4, "0")}`,
      athleteId: "ath_claims",
      uploader: "athlete",
      dataType: "fit" as const,
      gzip: false,
      receivedSha256: `r${i}`,
      contentSha256: `c${i}`,
      sizeBytes: 1,
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
    })),
  );
  await db.execute(sql`analyze uploads`);
});

describe("claimUploads", () => {
  it("claims at most `limit` uploads, oldest first, and counts an attempt only on those it answers", async () => {
    const answered: string[] = [];
    for (let round = 0; round < 20; round++) {
      const claimed = await claimUploads(db, { limit: 1 });
      expect(claimed).toHaveLength(1);
      answered.push(claimed[0]!.id);
    }
    const five = await claimUploads(db, { limit: 5 });
    expect(five).toHaveLength(5);
    answered.push(...five.map((c) => c.id));
    expect(answered).toEqual(Array.from({ length: 25 }, (_, i) => `upl_claim${String(i).padStart(4, "0")}`));
    const touched = await db.select({ id: uploads.id, attempts: uploads.attempts }).from(uploads).where(gt(uploads.attempts, 0));
    expect(touched.map((t) => t.id).sort()).toEqual([...answered].sort());
    expect(touched.every((t) => t.attempts === 1)).toBe(true);
  });

  it("takes a named upload only while it is claimable", async () => {
    const [claimed] = await claimUploads(db, { limit: 1, uploadId: "upl_claim0100" });
    expect(claimed).toEqual({ id: "upl_claim0100", attempts: 1, failures: 0, claim: expect.any(String) });
    expect(await claimUploads(db, { limit: 1, uploadId: "upl_claim0100" })).toEqual([]);
    const [row] = await db.select().from(uploads).where(eq(uploads.id, "upl_claim0100"));
    expect(row!.claimedUntil!.getTime()).toBeGreaterThan(Date.now());
  });

  it("takes athletes in turns: one athlete's season of files does not hold another's one file behind it", async () => {
    await db.update(uploads).set({ status: "succeeded" });
    await db.insert(users).values([
      { id: "ath_season", email: "season@example.com", name: "Season", passwordHash: "x" },
      { id: "ath_one", email: "one@example.com", name: "One", passwordHash: "x" },
    ]);
    const upload = (id: string, athleteId: string, second: number) => ({
      id,
      athleteId,
      uploader: "athlete",
      dataType: "fit" as const,
      gzip: false,
      receivedSha256: `r-${id}`,
      contentSha256: `c-${id}`,
      sizeBytes: 1,
      createdAt: new Date(Date.UTC(2026, 1, 1, 0, 0, second)),
    });
    // A season of 30 files at 0–29 s; the other athlete's two files come after all of them.
    await db.insert(uploads).values([
      ...Array.from({ length: 30 }, (_, i) => upload(`upl_season${String(i).padStart(2, "0")}`, "ath_season", i)),
      upload("upl_one0", "ath_one", 40),
      upload("upl_one1", "ath_one", 41),
    ]);
    // The sweep (Inngest) hands them out in the same order as the claims.
    expect((await listProcessingUploads(db, 5)).map((u) => u.id)).toEqual(["upl_season00", "upl_one0", "upl_season01", "upl_one1", "upl_season02"]);
    // The season's first file is taken and done (one processor, one file at a time): the
    // season's second still counts the first, so the other athlete's file is next.
    const first = await claimUploads(db, { limit: 1 });
    expect(first.map((c) => c.id)).toEqual(["upl_season00"]);
    await db.update(uploads).set({ status: "succeeded" }).where(eq(uploads.id, "upl_season00"));
    const next = await claimUploads(db, { limit: 1 });
    expect(next.map((c) => c.id)).toEqual(["upl_one0"]);
    // Several at once: the same three as one at a time would take (in no particular order).
    const three = await claimUploads(db, { limit: 3 });
    expect(three.map((c) => c.id).sort()).toEqual(["upl_one1", "upl_season01", "upl_season02"]);
    // Once the other athlete has nothing left, the season goes on oldest first.
    const rest = await claimUploads(db, { limit: 2 });
    expect(rest.map((c) => c.id).sort()).toEqual(["upl_season03", "upl_season04"]);
  });
});

describe("a processor whose lease lapsed", () => {
  it("changes nothing of the claim another processor took since: no renewal, no release, no deferral", async () => {
    const id = "upl_lapsed";
    await db.insert(uploads).values({ id, athleteId: "ath_claims", uploader: "athlete", dataType: "fit", gzip: false, receivedSha256: "r", contentSha256: "c", sizeBytes: 1 });
    const [a] = await claimUploads(db, { limit: 1, uploadId: id });
    // A stalls past its lease; B takes the upload.
    await db.update(uploads).set({ claimedUntil: sql`now() - interval '1 second'` }).where(eq(uploads.id, id));
    const [b] = await claimUploads(db, { limit: 1, uploadId: id });
    expect(b!.claim).not.toBe(a!.claim);
    const [before] = await db.select().from(uploads).where(eq(uploads.id, id));
    // A wakes up: its renewal, its failure's release and its deferral all name its own claim.
    await renewUploadClaim(db, a!, 300);
    await releaseUploadClaim(db, a!, 0);
    await deferUploadClaim(db, a!, 0);
    const [after] = await db.select().from(uploads).where(eq(uploads.id, id));
    expect(after).toEqual(before);
    expect(after).toMatchObject({ attempts: 2, failures: 0, claimId: b!.claim });
    // So nobody takes it from B while B's lease holds.
    expect(await claimUploads(db, { limit: 1, uploadId: id })).toEqual([]);
    // B's own release does end its claim early, counting the failure.
    await releaseUploadClaim(db, b!, 0);
    // Claimable once the database's clock has passed the release's `now()` (at once, but for its resolution).
    await expect.poll(() => claimUploads(db, { limit: 1, uploadId: id }), { timeout: 2_000 }).toEqual([{ id, attempts: 3, failures: 1, claim: expect.any(String) }]);
  });
});
