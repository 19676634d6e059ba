import { describe, expect, it } from "vitest";
import { expectWireShape } from "./wire-shape";
import { setupApi } from "./fixtures";

const api = setupApi();

const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });

describe("expectWireShape", () => {
  it("passes the service's own answers and fails one with a field more or less, at any depth", async () => {
    const person = await api.person();
    const token = await api.pat(person.id);
    const created = await api.call(token, "POST", "/v1/athletes/me/activities", {
      body: { name: "Run", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 600 },
    });
    expect(created.status).toBe(201);
    const listed = (await (await api.call(token, "GET", "/v1/athletes/me/activities")).json()) as { data: Record<string, unknown>[] };
    const [activity] = listed.data;
    const path = `/v1/athletes/${person.id}/activities`;
    await expectWireShape("GET", path, json(listed));

    const { energy_j: _, ...missing } = activity!;
    for (const wrong of [
      { ...listed, data: [{ ...activity, sport_type_label: "Run" }] },
      { ...listed, data: [missing] },
      { ...listed, data: [{ ...activity, distance_m: "10" }] },
      { ...listed, total: 1 },
    ]) {
      await expect(expectWireShape("GET", path, json(wrong))).rejects.toThrow(/listActivities's response schema/);
    }
  });
});
