import { is, Placeholder, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { rowsOf, type Db } from "../db/client";
import { setupApi } from "../testing/fixtures";
import { webhookRows } from "../testing/webhook-rows";
import { saveDeliveries } from "./fan-out";
import { recordSuccessesStatement } from "./record-attempt";

// The runner's batch statements take their keys as a JSON list, which the planner counts as 100
// rows whatever it holds. Joined to that alone, a table of a few thousand rows was read whole
// for every batch of four (bench/README.md, "The success record read the whole table"). These
// read the plan PostgreSQL makes, on tables of that size with fresh statistics.

const api = setupApi();
const rows = webhookRows(api.db);
const ROWS = 5000;

type PlanNode = { "Node Type": string; "Relation Name"?: string; Plans?: PlanNode[] };
const nodesOf = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodesOf)];

/**
 * The executed plan of a compiled statement for these values (one per placeholder, in the order
 * they first appear; the statement's own constants are filled in), its writes rolled back.
 */
async function planOf(db: Db, statement: { query: () => { sql: string; params: unknown[] } }, values: string[]): Promise<PlanNode[]> {
  const name = `plan_${Math.random().toString(36).slice(2)}`;
  let plan: PlanNode | undefined;
  const query = statement.query();
  const given = new Map<string, string>();
  const params = query.params.map((p) => {
    if (!is(p, Placeholder)) return String(p);
    if (!given.has(p.name)) given.set(p.name, values[given.size]!);
    return given.get(p.name)!;
  });
  await db
    .transaction(async (tx) => {
      await tx.execute(sql.raw(`prepare ${name} as ${query.sql}`));
      const args = params.map((v) => `'${v.replaceAll("'", "''")}'`).join(", ");
      const [row] = rowsOf<{ "QUERY PLAN": unknown }>(await tx.execute(sql.raw(`explain (analyze, format json) execute ${name}(${args})`)));
      const json = row!["QUERY PLAN"];
      plan = (typeof json === "string" ? JSON.parse(json) : json)[0].Plan as PlanNode;
      throw new Error("roll back");
    })
    .catch((err: unknown) => {
      if (!(err instanceof Error && err.message === "roll back")) throw err;
    });
  return nodesOf(plan!);
}

describe("the runner's batch statements find their rows by key", () => {
  it("the success record reads deliveries and subscriptions through their primary keys, however small the tables", async () => {
    const db = await api.db();
    const clientId = await rows.app();
    const sub = await rows.subscribe(clientId, "http://127.0.0.1:9/hook", undefined, { consecutiveFailures: 2, failingSince: new Date() });
    await db.execute(sql`
      insert into webhook_deliveries (id, subscription_id, event_id, event_seq, status, attempt_count)
      select 'whd_plan' || g, ${sub.id}, 'evt_plan' || g, g, case when g <= ${ROWS} - 4 then 'succeeded' else 'pending' end, 1
      from generate_series(1, ${ROWS}) g`);
    // Other subscriptions, a tenth of them failing: the failing ones the batch ends the streak of
    // are locked first (policy.ts, "Lock order"), found by key, not by reading them all.
    await db.execute(sql`
      insert into webhook_subscriptions (id, client_id, url, events, secret_sealed, consecutive_failures)
      select 'whs_plan' || g, ${clientId}, 'http://127.0.0.1:9/hook', '{activity.created}', 'v1.a.b.c', case when g % 10 = 0 then 1 else 0 end
      from generate_series(1, ${ROWS}) g`);
    await db.execute(sql`analyze webhook_deliveries`);
    await db.execute(sql`analyze webhook_subscriptions`);
    const input = JSON.stringify(
      [1, 2, 3, 4].map((k) => ({
        delivery_id: `whd_plan${ROWS - 4 + k}`,
        attempt_id: `wha_plan${k}`,
        started_at: new Date().toISOString(),
        duration_ms: 3,
        status: 200,
        excerpt: "",
        headers: { "Content-Type": "application/json" },
        body: "{}",
      })),
    );
    const nodes = await planOf(db, recordSuccessesStatement, [input]).finally(async () => {
      // The fan-out's plan below is made for the outbox; these many subscriptions would change it.
      await db.execute(sql`delete from webhook_subscriptions where id like 'whs_plan%'`);
      await db.execute(sql`analyze webhook_subscriptions`);
    });
    expect(nodes.some((n) => n["Relation Name"] === "webhook_deliveries" && n["Node Type"] !== "Seq Scan")).toBe(true);
    expect(nodes.filter((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "webhook_deliveries")).toEqual([]);
    expect(nodes.some((n) => n["Relation Name"] === "webhook_subscriptions" && n["Node Type"] !== "Seq Scan")).toBe(true);
    expect(nodes.filter((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "webhook_subscriptions")).toEqual([]);
  });

  it("the fan-out marks its events through the primary key, however small the outbox", async () => {
    const db = await api.db();
    const athlete = await api.person();
    await db.execute(sql`
      insert into events (id, type, athlete_id, object_id, object_type, fanned_out_at)
      select 'evt_plan_o' || g, 'activity.created', ${athlete.id}, 'act_plan' || g, 'activity', now()
      from generate_series(1, ${ROWS}) g`);
    await db.execute(sql`analyze events`);
    const [last] = rowsOf<{ seq: string | number }>(await db.execute(sql`select max(seq) as seq from events`));
    const seqs = JSON.stringify([Number(last!.seq) - 1, Number(last!.seq)]);
    const nodes = await planOf(db, saveDeliveries, ["[]", seqs]);
    expect(nodes.some((n) => n["Relation Name"] === "events" && n["Node Type"] !== "Seq Scan")).toBe(true);
    expect(nodes.filter((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "events")).toEqual([]);
  });
});
