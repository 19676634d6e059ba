import { afterEach, describe, expect, it, vi } from "vitest";
import { eq, type SQLWrapper } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { afterCommit, inTransaction } from "../db/transaction";
import type { Db } from "../db/client";
import { events } from "../db/schema";
import { setupApi } from "../testing/fixtures";
import { listenForWebhookWork } from "../webhooks/listen";
import type { Work } from "./notify";
import { appendEvent } from "./append-event";
import { notifyUploadWork } from "../uploads/wake";

const api = setupApi();
const dialect = new PgDialect();

/** The SQL text of each statement sent through `execute` on `db`, from now on. */
function executed(db: Db): string[] {
  const seen: string[] = [];
  const original = db.execute.bind(db);
  vi.spyOn(db, "execute").mockImplementation(((q: SQLWrapper | string) => {
    seen.push(typeof q === "string" ? q : dialect.sqlToQuery(q.getSQL()).sql);
    return original(q as SQLWrapper);
  }) as typeof db.execute);
  return seen;
}

/** Until `heard` holds `n` notifications (each a listener's callback; no fixed sleep). */
async function hearing(heard: Work[], n: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (heard.length < n) {
    if (Date.now() > deadline) throw new Error(`heard ${heard.length} of ${n} notifications`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

afterEach(() => vi.restoreAllMocks());

/**
 * Runs `body` with a person, the database, what its listener hears on the runners' channel,
 * and the statements sent through `execute` on the database; the listener ends after.
 */
async function listening(body: (t: { me: { id: string }; db: Db; heard: Work[]; onDb: string[] }) => Promise<void>): Promise<void> {
  const me = await api.person();
  const db = await api.db();
  const heard: Work[] = [];
  const unlisten = await listenForWebhookWork(db, (w) => heard.push(w));
  try {
    await body({ me, db, heard, onDb: executed(db) });
  } finally {
    await unlisten();
  }
}
const notifies = (statements: string[]) => statements.filter((s) => s.includes("pg_notify"));

describe("the runners' notification of new work", () => {
  it("is sent once the write has committed, on the database, and not from inside the write's transaction", () =>
    listening(async ({ me, db, heard, onDb }) => {
      await inTransaction(db, async (tx) => {
        const watched = executed(tx);
        await appendEvent(tx, { type: "metric.created", athleteId: me.id, objectId: "met_1", objectType: "metric" });
        await appendEvent(tx, { type: "metric.created", athleteId: me.id, objectId: "met_2", objectType: "metric" });
        // Inside the transaction nothing notifies: a notifying transaction holds PostgreSQL's
        // notify lock from before its commit until its commit is on disk.
        expect(notifies(watched)).toEqual([]);
        expect(heard).toEqual([]);
      });
      // Once, after the commit, for both events.
      expect(notifies(onDb)).toHaveLength(1);
      await hearing(heard, 1);
      expect(heard).toEqual(["outbox"]);
    }));

  it("for an upload, too, is sent after its transaction commits, not from inside it", async () => {
    const db = await api.db();
    const onDb = executed(db);
    await inTransaction(db, async (tx) => {
      const watched = executed(tx);
      await notifyUploadWork(tx);
      await notifyUploadWork(tx);
      expect(notifies(watched)).toEqual([]);
    });
    expect(notifies(onDb)).toHaveLength(1);
  });

  it("is never sent for a write that rolls back", () =>
    listening(async ({ me, db, heard, onDb }) => {
      await expect(
        inTransaction(db, async (tx) => {
          await appendEvent(tx, { type: "metric.created", athleteId: me.id, objectId: "met_rolled_back", objectType: "metric" });
          throw new Error("the write fails after its event");
        }),
      ).rejects.toThrow("the write fails after its event");
      expect(notifies(onDb)).toEqual([]);
      // A committed write afterwards is heard, and it is the only thing heard.
      await inTransaction(db, (tx) => appendEvent(tx, { type: "metric.created", athleteId: me.id, objectId: "met_kept", objectType: "metric" }));
      await hearing(heard, 1);
      expect(heard).toEqual(["outbox"]);
      const rows = await db.select({ objectId: events.objectId }).from(events).where(eq(events.athleteId, me.id));
      expect(rows.map((r) => r.objectId)).toEqual(["met_kept"]);
    }));
});

describe("afterCommit", () => {
  it("runs each key's step once after the commit, on the database; a failing step leaves the commit standing; on a plain database at once", async () => {
    const db = await api.db();
    const ran: string[] = [];
    const made = await inTransaction(db, async (tx) => {
      await afterCommit(tx, "a", async (on) => ran.push(on === db ? "a on db" : "a elsewhere"));
      await afterCommit(tx, "a", async () => ran.push("a again"));
      await afterCommit(tx, "fails", async () => {
        throw new Error("step failed");
      });
      await afterCommit(tx, "b", async () => ran.push("b"));
      expect(ran).toEqual([]);
      return "committed";
    });
    expect(made).toBe("committed");
    expect(ran).toEqual(["a on db", "b"]);

    await expect(
      inTransaction(db, async (tx) => {
        await afterCommit(tx, "c", async () => ran.push("c"));
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(ran).toEqual(["a on db", "b"]);

    await afterCommit(db, "d", async (on) => ran.push(on === db ? "d at once on db" : "d elsewhere"));
    expect(ran).toEqual(["a on db", "b", "d at once on db"]);
  });
});
