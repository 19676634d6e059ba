import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { rowsOf } from "../../db/client";
import { webhookSubscriptions } from "../../db/schema";
import { setupApi } from "../../testing/fixtures";

const api = setupApi();

async function subscription(clientId: string): Promise<string> {
  const id = `whs_${randomBytes(8).toString("hex")}`;
  await (await api.db())
    .insert(webhookSubscriptions)
    .values({ id, clientId, url: "https://hooks.example.com/x", events: ["activity.created"], secretSealed: "v1.a.b.c" });
  return id;
}

// Holding a delete open while a request runs needs two connections at once: PostgreSQL's pool
// has them, the embedded database has one (there the request would wait for the test forever).
describe.runIf(process.env.TEST_DATABASE_URL)("a subscription deleted while a test event or a redelivery is added to it", () => {
  it("answers 404 (or succeeds first), never a foreign-key 500", async () => {
    const app = await api.app();
    const db = await api.db();
    for (const action of ["send-test-event", "redeliver"] as const) {
      const id = await subscription(app.clientId);
      let path = `/v1/app/webhooks/${id}/send-test-event`;
      if (action === "redeliver") {
        const sent = await api.call(app.token, "POST", path);
        expect(sent.status).toBe(202);
        path = `/v1/app/webhooks/${id}/deliveries/${((await sent.json()) as { id: string }).id}/redeliver`;
      }
      let answer: Promise<Response> | undefined;
      await db.transaction(async (tx) => {
        await tx.delete(webhookSubscriptions).where(eq(webhookSubscriptions.id, id));
        answer = api.call(app.token, "POST", path);
        // Commit only once the request waits on the deleted row's lock.
        for (let i = 0; i < 500; i++) {
          const [w] = rowsOf<{ n: number }>(
            await db.execute(sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`),
          );
          if (w!.n > 0) return;
          await new Promise((r) => setTimeout(r, 10));
        }
        throw new Error("the request never waited for the delete");
      });
      const res = await answer!;
      expect(res.status, `${action}: ${await res.clone().text()}`).toBe(404);
      expect(((await res.json()) as { code: string }).code).toBe("not_found");
    }
  });
});
