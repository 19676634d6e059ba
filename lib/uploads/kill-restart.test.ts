import { SAMPLES_DIR } from "../files/testing/samples";
import { afterAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { eq } from "drizzle-orm";
import { createChildDatabase } from "../testing/db";
import { activities, events, uploads } from "../db/schema";
import { startUploadProcessor } from "./local-processor";

/**
 * A crash mid-processing loses nothing (issue 11): a service process that parsed an upload is
 * killed with SIGKILL before writing anything; a new process on the same database processes the
 * upload once its lease ends, exactly once.
 */
const CHILD = path.join(process.cwd(), "lib/uploads/kill-child.ts");
const FILE = path.join(SAMPLES_DIR, "fit/garmin-edge-820-bike.fit");
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function database() {
  const db = await createChildDatabase("aas-upload-kill-");
  cleanups.push(db.cleanup);
  return db;
}

describe("kill and restart", () => {
  it("an upload whose processor was killed after parsing is processed by the next one, exactly once", { timeout: 90_000 }, async () => {
    const db = await database();
    const proc = spawn(process.execPath, ["--conditions=react-server", "--import", "tsx", CHILD], {
      env: { ...process.env, ...db.env, CHILD_FILE: FILE, CHILD_LEASE_S: "2", SECRETS_KEY: "upload-kill-test-key", LOG_LEVEL: "silent" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    cleanups.push(() => void proc.kill("SIGKILL"));
    const exited = new Promise<void>((resolve) => proc.on("exit", () => resolve()));
    let uploadId = "";
    let athleteId = "";
    await new Promise<void>((resolve, reject) => {
      proc.on("exit", (code) => reject(new Error(`child exited with ${code} before parsing`)));
      createInterface({ input: proc.stdout! }).on("line", (line) => {
        const [what, id, athlete] = line.split(" ");
        if (what === "uploaded") [uploadId, athleteId] = [id!, athlete!];
        if (what === "parsed" && id === uploadId) resolve();
      });
    });
    proc.kill("SIGKILL");
    await exited;

    const handle = await db.open();
    cleanups.push(() => handle.close());
    const [left] = await handle.db.select().from(uploads).where(eq(uploads.id, uploadId));
    expect(left).toMatchObject({ status: "processing", attempts: 1 });
    expect(await handle.db.select().from(activities).where(eq(activities.athleteId, athleteId))).toHaveLength(0);

    const processor = startUploadProcessor({ db: handle.db, pollMs: 100 });
    cleanups.push(() => processor.stop());
    // The dead claim holds until its lease ends; the processor's poll takes it after that.
    await new Promise((r) => setTimeout(r, Math.max(0, left!.claimedUntil!.getTime() - Date.now())));
    let done = left!;
    while (done.status === "processing") {
      await processor.idle();
      const [row] = await handle.db.select().from(uploads).where(eq(uploads.id, uploadId));
      done = row!;
    }
    expect(done).toMatchObject({ status: "succeeded", attempts: 2 });
    const made = await handle.db.select().from(activities).where(eq(activities.athleteId, athleteId));
    expect(made.map((a) => a.id).sort()).toEqual([...done.activityIds].sort());
    expect(made.length).toBeGreaterThan(0);
    const created = await handle.db.select().from(events).where(eq(events.athleteId, athleteId));
    expect(created.filter((e) => e.type === "activity.created")).toHaveLength(made.length);
  });
});
