import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { setupApi } from "../testing/fixtures";
import { getStreams } from "../activities/get-streams";
import { listActivities } from "../activities/list-activities";
import { batchedLookup, keysAsJson } from "./batcher";
import { personalAccessTokens } from "./schema";

const api = setupApi();

/** A verb's context for `userId` reading with a PAT that holds `activities.read`. */
async function readerCtx(userId: string) {
  return { db: await api.db(), actor: { kind: "pat" as const, userId, tokenId: "pat_test", scopes: new Set(["activities.read" as const]) } };
}

/**
 * A lookup whose statement is a plain function that records each batch it was given: the
 * batcher's contract is which keys go together, which a statement's results cannot show.
 * Each batch waits for `release()` so a test can add keys while it is "in flight".
 */
function recordingLookup(opts: { failOn?: (keys: string[]) => Error | undefined } = {}) {
  const batches: string[][] = [];
  const inFlight: (() => void)[] = [];
  const lookup = batchedLookup<{ key: string; batch: number }>(
    async (keysJson) => {
      const keys = JSON.parse(keysJson) as string[];
      batches.push(keys);
      const batch = batches.length;
      await new Promise<void>((resolve) => inFlight.push(resolve));
      const err = opts.failOn?.(keys);
      if (err) throw err;
      return keys.filter((k) => !k.startsWith("missing")).map((k) => ({ key: k, batch }));
    },
    (row) => row.key,
  );
  const release = async () => {
    // Let the batch's statement start, then answer every one waiting.
    for (let i = 0; i < 5; i++) await Promise.resolve();
    for (const r of inFlight.splice(0)) r();
  };
  return { lookup, batches, release };
}

describe("batchedLookup", () => {
  it("sends the keys asked in one turn as one statement, once each, and gives every caller its own key's value", async () => {
    const { lookup, batches, release } = recordingLookup();
    const asked = ["a", "b", "a", "missing-1", "c"].map((k) => lookup(k));
    await release();
    const values = await Promise.all(asked);
    expect(batches).toEqual([["a", "b", "missing-1", "c"]]);
    expect(values.map((v) => v?.key)).toEqual(["a", "b", "a", undefined, "c"]);
  });

  it("sends the keys that arrive while a statement is on its way together, in the next one", async () => {
    const { lookup, batches, release } = recordingLookup();
    const first = lookup("a");
    await Promise.resolve();
    // Asked in three later turns while the first statement waits for its answer.
    const later: Promise<unknown>[] = [];
    for (const k of ["b", "c", "d"]) {
      await new Promise((r) => setImmediate(r));
      later.push(lookup(k));
    }
    expect(batches).toEqual([["a"]]);
    await release();
    expect((await first)?.batch).toBe(1);
    await release();
    const values = (await Promise.all(later)) as { batch: number }[];
    expect(batches).toEqual([["a"], ["b", "c", "d"]]);
    expect(values.map((v) => v.batch)).toEqual([2, 2, 2]);
  });

  it("a key whose statement fails fails only its own callers; the others of its batch are answered", async () => {
    const { lookup, batches, release } = recordingLookup({
      failOn: (keys) => (keys.includes("poison") ? new Error("invalid input syntax") : undefined),
    });
    const asked = ["a", "poison", "b"].map((k) => lookup(k));
    // The batch, then each key alone.
    for (let i = 0; i < 4; i++) await release();
    const [a, poison, b] = await Promise.allSettled(asked);
    expect(a).toMatchObject({ status: "fulfilled", value: { key: "a" } });
    expect(b).toMatchObject({ status: "fulfilled", value: { key: "b" } });
    expect(poison).toMatchObject({ status: "rejected", reason: { message: "invalid input syntax" } });
    expect(batches).toEqual([["a", "poison", "b"], ["a"], ["poison"], ["b"]]);
  });

  it("an unreachable database fails the whole batch at once, without a statement per key", async () => {
    const { lookup, batches, release } = recordingLookup({
      failOn: () => Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
    });
    const asked = ["a", "b", "c"].map((k) => lookup(k));
    await release();
    const settled = await Promise.allSettled(asked);
    expect(settled.map((s) => s.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(batches).toEqual([["a", "b", "c"]]);
  });
});

describe("tokens looked up together", () => {
  it("answer each concurrent request as its own token's athlete, and refuse the revoked and unknown ones among them", async () => {
    const people = await Promise.all(Array.from({ length: 6 }, (_, i) => api.person({ name: `Batch ${i}` })));
    const tokens = await Promise.all(people.map((p) => api.pat(p.id)));
    const revokedOwner = await api.person();
    const revoked = await api.pat(revokedOwner.id);
    const db = await api.db();
    await db.update(personalAccessTokens).set({ revokedAt: new Date() }).where(eq(personalAccessTokens.userId, revokedOwner.id));
    // A well-formed token (its checksum holds) that is no longer on record: a real token with a
    // character changed would fail the checksum before any lookup.
    const ghost = await api.person();
    const unknown = await api.pat(ghost.id);
    await db.delete(personalAccessTokens).where(eq(personalAccessTokens.userId, ghost.id));

    // Three rounds of every token at once, interleaved, so each batch holds several tokens
    // (and some tokens twice).
    const calls: { token: string; expect: string | number }[] = [];
    for (let round = 0; round < 3; round++) {
      tokens.forEach((t, i) => calls.push({ token: t, expect: people[i]!.id }));
      calls.push({ token: revoked, expect: 401 }, { token: unknown, expect: 401 });
    }
    const answers = await Promise.all(calls.map((c) => api.call(c.token, "GET", "/v1/athletes/me")));
    const seen = await Promise.all(answers.map(async (res) => (res.status === 200 ? ((await res.json()) as { id: string }).id : res.status)));
    expect(seen).toEqual(calls.map((c) => c.expect));
  });
});

describe("keys no text column can hold", () => {
  it("are left out of the statement's keys, so they find nothing instead of failing it", () => {
    expect(JSON.parse(keysAsJson(["act_1", "a\u0000b", "\ud800x", "y\udfff", "😀"]))).toEqual(["act_1", "😀"]);
  });

  it("find no activity, while the real one asked in the same batch is answered", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    const res = await api.call(token, "POST", "/v1/athletes/me/activities", {
      body: { name: "Run", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800 },
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const ctx = await readerCtx(p.id);
    // Asked in one turn: one batch. An MCP tool's arguments can carry such text (a path cannot).
    const asked = [id, "a\u0000b", "\ud800x"].map((activityId) => getStreams({ ctx, activityId, query: { resolution: "full" } }));
    const settled = await Promise.allSettled(asked);
    expect(settled[0]).toMatchObject({ status: "fulfilled", value: expect.anything() });
    expect(settled.slice(1)).toMatchObject([
      { status: "rejected", reason: { code: "not_found" } },
      { status: "rejected", reason: { code: "not_found" } },
    ]);
  });
});

describe("activity pages, batched", () => {
  it("give each list asked in one turn its own athlete's page, first pages and later ones, as when asked alone", async () => {
    const people = await Promise.all([0, 3, 7].map((n, i) => api.person({ name: `Pages ${i}` }).then((p) => ({ ...p, n }))));
    for (const p of people) {
      const token = await api.pat(p.id);
      for (let i = 0; i < p.n; i++) {
        const res = await api.call(token, "POST", "/v1/athletes/me/activities", {
          // Two share a start, so the id decides their order.
          body: { name: `Run ${i}`, sport_type: "run", start_local: `2026-03-${String(10 + Math.min(i, 5)).padStart(2, "0")}T07:30:00`, elapsed_time_s: 1800 },
        });
        expect(res.status).toBe(201);
      }
    }
    // Contexts first, so each batch of lists below is asked in one turn.
    const ctxs = await Promise.all(people.map((p) => readerCtx(p.id)));
    type Ask = { who: number; limit: number; cursor?: string };
    const list = (a: Ask) =>
      listActivities({ ctx: ctxs[a.who]!, athleteId: "me", query: { limit: a.limit, ...(a.cursor ? { cursor: a.cursor } : {}) } }).then(
        (r) => JSON.parse(r.text) as { data: { id: string; athlete_id: string }[]; next_cursor: string | null },
      );
    const alone = async (asks: Ask[]) => {
      const out = [];
      for (const a of asks) out.push(await list(a));
      return out;
    };

    const firsts: Ask[] = [{ who: 1, limit: 2 }, { who: 2, limit: 3 }, { who: 0, limit: 10 }, { who: 2, limit: 3 }, { who: 1, limit: 50 }, { who: 2, limit: 6 }];
    const want = await alone(firsts);
    expect(await Promise.all(firsts.map(list))).toEqual(want);
    expect(want.map((p) => p.data.length)).toEqual([2, 3, 0, 3, 3, 6]);
    expect(want[0]!.data.every((a) => a.athlete_id === people[1]!.id)).toBe(true);

    const laters: Ask[] = [
      { who: 1, limit: 2, cursor: want[0]!.next_cursor! },
      { who: 2, limit: 3, cursor: want[1]!.next_cursor! },
      { who: 2, limit: 6, cursor: want[5]!.next_cursor! },
      { who: 2, limit: 2, cursor: want[1]!.next_cursor! },
    ];
    const wantLater = await alone(laters);
    expect(await Promise.all(laters.map(list))).toEqual(wantLater);
    expect(wantLater.map((p) => p.data.length)).toEqual([1, 3, 1, 2]);
    // The pages of an athlete, walked, hold each activity once.
    const walked = [...want[1]!.data, ...wantLater[1]!.data, ...(await list({ who: 2, limit: 3, cursor: wantLater[1]!.next_cursor! })).data].map((a) => a.id);
    expect(new Set(walked).size).toBe(7);
  });
});
