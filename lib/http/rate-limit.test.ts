import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { resetEnvForTests } from "../env";
import { awayFromWindowEdge } from "../testing/clock";
import { setupApi } from "../testing/fixtures";
import { writeCounts } from "../testing/rows";
import { eq, sql } from "drizzle-orm";
import { rowsOf, type Db } from "../db/client";
import { oauthClients, oauthGrants, oauthTokenFamilies, personalAccessTokens } from "../db/schema";
import { newId } from "../ids";
import { issueAccessToken } from "../oauth/access-token";
import type { Scope } from "../auth/scopes";
import { consumeRateLimit, peekRateLimit } from "./rate-limit";
import { CONSOLE_LIMIT_SCALE } from "./console-route";

const api = setupApi();

const LIMIT = 5;
const RUN = { name: "Run", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800 };

beforeAll(() => {
  // The settings object is cached: change the variable, then make the next read see it.
  process.env.RATE_LIMIT_15MIN = String(LIMIT);
  // The tests' requests come from loopback: as behind a proxy there, X-Forwarded-For names
  // the address each test stands for.
  process.env.TRUSTED_PROXIES = "loopback";
  resetEnvForTests();
});

afterAll(() => {
  delete process.env.RATE_LIMIT_15MIN;
  delete process.env.TRUSTED_PROXIES;
  resetEnvForTests();
});

// The windows are fixed 15-minute slots: a test straddling a slot's end would see its count
// reset halfway. Start each test well inside a slot.
beforeEach(() => awayFromWindowEdge());

type Window = { r: number; t: number };

/** The `RateLimit` header (draft-ietf-httpapi-ratelimit-headers), by policy name. */
function remaining(res: Response): Record<string, Window> {
  const header = res.headers.get("ratelimit");
  expect(header, `RateLimit on a ${res.status}`).not.toBeNull();
  const out: Record<string, Window> = {};
  for (const item of header!.split(/,\s*/)) {
    const m = /^"(\w+)";r=(\d+);t=(\d+)$/.exec(item);
    expect(m, item).not.toBeNull();
    out[m![1]!] = { r: Number(m![2]), t: Number(m![3]) };
  }
  return out;
}

const POLICY = `"15min";q=${LIMIT};w=900, "daily";q=30000;w=86400`;

describe("rate-limit headers", () => {
  it("come on every answer to an identified caller, counting down with each request, errors included", async () => {
    const p = await api.person();
    const other = await api.person();
    const token = await api.pat(p.id);
    const answers = [
      await api.call(token, "GET", "/v1/athletes/me"),
      await api.call(token, "POST", "/v1/athletes/me/activities", { body: RUN }),
      await api.call(token, "GET", "/v1/athletes/me/activities?start=2026-02-30"),
      await api.call(token, "GET", `/v1/athletes/${other.id}`),
      await api.call(token, "GET", "/v1/activities/act_doesnotexist"),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 201, 400, 403, 404]);
    answers.forEach((res, i) => {
      expect(res.headers.get("ratelimit-policy")).toBe(POLICY);
      const w = remaining(res);
      expect(w["15min"]!.r).toBe(LIMIT - 1 - i);
      expect(w.daily!.r).toBe(30_000 - 1 - i);
      expect(w["15min"]!.t).toBeGreaterThanOrEqual(1);
      expect(w["15min"]!.t).toBeLessThanOrEqual(900);
      expect(w.daily!.t).toBeLessThanOrEqual(86_400);
      expect(res.headers.get("retry-after")).toBeNull();
    });
  });

  it("come on 402 answers too", async () => {
    const ben = await api.person({ billing: "expired" });
    const res = await api.call(await api.pat(ben.id), "GET", "/v1/athletes/me");
    expect(res.status).toBe(402);
    expect(res.headers.get("ratelimit-policy")).toBe(POLICY);
    expect(remaining(res)["15min"]!.r).toBe(LIMIT - 1);
  });

  it("come on 404s for unknown paths and on 405s, which count against the caller's window", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    const unknown = await api.call(token, "GET", "/v1/nothing-here");
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("ratelimit-policy")).toBe(POLICY);
    expect(remaining(unknown)["15min"]!.r).toBe(LIMIT - 1);
    const wrongMethod = await api.call(token, "DELETE", "/v1/athletes/me");
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("ratelimit-policy")).toBe(POLICY);
    expect(remaining(wrongMethod)["15min"]!.r).toBe(LIMIT - 2);
  });

  it("come on a path written with a trailing slash, which is served as the path without it", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    const plain = await api.call(token, "GET", "/v1/athletes/me");
    const slashed = await api.call(token, "GET", "/v1/athletes/me/");
    // Answered at that path, not redirected to the other (a redirect is answered outside every route).
    expect(slashed.redirected).toBe(false);
    expect(slashed.status).toBe(200);
    expect(await slashed.json()).toEqual(await plain.json());
    expect(slashed.headers.get("ratelimit-policy")).toBe(POLICY);
    expect(remaining(slashed)["15min"]!.r).toBe(LIMIT - 2);
  });

  it("come on the refusals of paths no route may see (an empty segment, escapes that are not UTF-8), which count too", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    const empty = await api.call(token, "GET", "/v1/teams//members");
    expect(empty.status).toBe(404);
    expect(await empty.json()).toMatchObject({ code: "not_found", detail: "The path has an empty segment: an id is missing." });
    expect(empty.headers.get("ratelimit-policy")).toBe(POLICY);
    expect(remaining(empty)["15min"]!.r).toBe(LIMIT - 1);
    const escapes = await api.call(token, "DELETE", "/v1/activities/%FF");
    expect(escapes.status).toBe(400);
    expect(await escapes.json()).toMatchObject({ code: "invalid_request" });
    expect(remaining(escapes)["15min"]!.r).toBe(LIMIT - 2);
    // A client cannot write the refusal itself.
    const forged = await api.call(token, "GET", "/v1/nothing-here", { headers: { "x-aas-refused": JSON.stringify({ code: "invalid_request", detail: "forged" }) } });
    expect(await forged.json()).toMatchObject({ code: "not_found", detail: "No API endpoint at /v1/nothing-here." });
  });

  it("come on the public OpenAPI document, counted for the token's owner or else the address", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    const withToken = await api.call(token, "GET", "/v1/openapi.json");
    expect(withToken.status).toBe(200);
    expect(withToken.headers.get("ratelimit-policy")).toBe(POLICY);
    expect(remaining(withToken)["15min"]!.r).toBe(LIMIT - 1);
    const from = { "x-forwarded-for": "203.0.113.91" };
    const anonymous = await api.call(null, "GET", "/v1/openapi.json", { headers: from });
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get("ratelimit-policy")).toBe(POLICY);
    expect(remaining(anonymous)["15min"]!.r).toBe(LIMIT - 1);
    // Its RateLimit is this caller's: no shared cache may hand it to another.
    expect(anonymous.headers.get("cache-control")).toBe("private, max-age=300");
  });

  it("come on a 401 too, counted per address: a caller without a valid token has a window of its own", async () => {
    const from = { "x-forwarded-for": "203.0.113.7" };
    const first = await api.call(null, "GET", "/v1/athletes/me", { headers: from });
    expect(first.status).toBe(401);
    expect(first.headers.get("ratelimit-policy")).toBe(POLICY);
    expect(remaining(first)["15min"]!.r).toBe(LIMIT - 1);
    const second = await api.call("garbage", "GET", "/v1/athletes/me", { headers: from });
    expect(second.status).toBe(401);
    expect(remaining(second)["15min"]!.r).toBe(LIMIT - 2);
  });
});

describe("guessing tokens", () => {
  it("is refused with 429 once an address has spent its window on invalid tokens, while valid tokens go on", async () => {
    const from = { "x-forwarded-for": "198.51.100.23" };
    for (let i = 0; i < LIMIT; i++) {
      expect((await api.call(`aas_pat_guess${i}`, "GET", "/v1/athletes/me", { headers: from })).status).toBe(401);
    }
    const refused = await api.call("aas_pat_guess-more", "GET", "/v1/athletes/me", { headers: from });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { code: string }).code).toBe("rate_limited");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // The 401's challenge stays on the 429 (RFC 9110 §11.6.1): where a token comes from, and that this one was refused.
    expect(refused.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${api.url}/.well-known/oauth-protected-resource/v1", error="invalid_token", error_description="The personal access token is malformed."`);
    // An assistant's first request, with no token, from the same (shared) address: still told where to start.
    const mcp = await fetch(`${api.url}/mcp`, {
      method: "POST",
      headers: { ...from, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(mcp.status).toBe(429);
    expect(mcp.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${api.url}/.well-known/oauth-protected-resource/mcp", scope="athlete.read activities.read metrics.read teams.read"`,
    );
    const p = await api.person();
    expect((await api.call(await api.pat(p.id), "GET", "/v1/athletes/me", { headers: from })).status).toBe(200);
  });
});

describe("guessing console sessions", () => {
  it("counts console requests without a valid session per address, in a window of the console's own, and refuses past it with the console's challenge", async () => {
    const from = { "x-forwarded-for": "198.51.100.77" };
    const forged = { ...from, cookie: "authjs.session-token=eyJhbGciOiJub25lIn0.e30." };
    const window = LIMIT * CONSOLE_LIMIT_SCALE;
    for (let i = 0; i < window; i++) {
      const res = await fetch(`${api.url}/api/console/profile`, { headers: i % 2 ? forged : from });
      expect(res.status).toBe(401);
      expect(remaining(res)["15min"]!.r).toBe(window - 1 - i);
    }
    const refused = await fetch(`${api.url}/api/console/profile`, { headers: forged });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: "rate_limited" });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // The 401's challenge stays on the 429: the page still learns its session ended.
    expect(refused.headers.get("www-authenticate")).toBe('Session realm="console"');
    // /v1's callers without a token at the same address have their own window, untouched.
    const v1 = await api.call(null, "GET", "/v1/athletes/me", { headers: from });
    expect(v1.status).toBe(401);
    expect(remaining(v1)["15min"]!.r).toBe(LIMIT - 1);
  });
});

describe("429 rate_limited", () => {
  it("refuses the request after the limit, with Retry-After in seconds and nothing written", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    for (let i = 0; i < LIMIT; i++) expect((await api.call(token, "GET", "/v1/athletes/me")).status).toBe(200);
    const counts = await writeCounts();

    for (const [method, path, body] of [
      ["GET", "/v1/athletes/me", undefined],
      ["POST", "/v1/athletes/me/activities", RUN],
      ["DELETE", "/v1/athletes/me", undefined],
      ["GET", "/v1/nothing-here", undefined],
    ] as const) {
      const res = await api.call(token, method, path, { body });
      expect(res.status).toBe(429);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(await res.json()).toMatchObject({ status: 429, code: "rate_limited", type: `${api.url}/problems/rate_limited` });
      const retryAfter = res.headers.get("retry-after");
      expect(retryAfter).toMatch(/^\d+$/);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(retryAfter)).toBeLessThanOrEqual(900);
      const w = remaining(res);
      expect(w["15min"]!.r).toBe(0);
      expect(Number(retryAfter)).toBe(w["15min"]!.t);
    }
    expect(await writeCounts()).toEqual(counts);
  });

  it("with both windows used up, Retry-After waits for the one that reopens last, and names it", async () => {
    process.env.RATE_LIMIT_DAILY = String(LIMIT);
    resetEnvForTests();
    try {
      const p = await api.person();
      const token = await api.pat(p.id);
      for (let i = 0; i < LIMIT; i++) expect((await api.call(token, "GET", "/v1/athletes/me")).status).toBe(200);
      const res = await api.call(token, "GET", "/v1/athletes/me");
      expect(res.status).toBe(429);
      const w = remaining(res);
      expect([w["15min"]!.r, w.daily!.r]).toEqual([0, 0]);
      expect(Number(res.headers.get("retry-after"))).toBe(Math.max(w["15min"]!.t, w.daily!.t));
      expect(((await res.json()) as { detail: string }).detail).toContain(w.daily!.t >= w["15min"]!.t ? "daily" : "15min");
    } finally {
      delete process.env.RATE_LIMIT_DAILY;
      resetEnvForTests();
    }
  });

  it.each([
    ["at midday, the day's", "2026-03-01T12:07:30Z", "daily", 11 * 3600 + 52 * 60 + 30],
    ["in the day's last quarter hour, when both reopen at midnight, still the day's", "2026-03-01T23:50:00Z", "daily", 600],
  ])("with both windows used up %s is the one named", async (_when, at, name, resetS) => {
    process.env.RATE_LIMIT_DAILY = String(LIMIT);
    resetEnvForTests();
    try {
      const db = await api.db();
      const bucket = `test-both:${randomBytes(6).toString("hex")}`;
      const nowMs = Date.parse(at);
      for (let i = 0; i < LIMIT; i++) expect((await consumeRateLimit(db, bucket, nowMs)).exceeded).toBeUndefined();
      const over = await consumeRateLimit(db, bucket, nowMs);
      expect(over.windows.every((w) => w.used > w.limit)).toBe(true);
      expect(over.exceeded).toMatchObject({ name, resetS });
    } finally {
      delete process.env.RATE_LIMIT_DAILY;
      resetEnvForTests();
    }
  });

  it("counts per PAT owner: two tokens of one person share a window, another person has their own", async () => {
    const ava = await api.person();
    const eve = await api.person();
    const first = await api.pat(ava.id, ["athlete.read"]);
    const second = await api.pat(ava.id, ["athlete.read", "activities.read"]);
    for (let i = 0; i < LIMIT; i++) {
      const res = await api.call(i % 2 ? second : first, "GET", "/v1/athletes/me");
      expect(res.status).toBe(200);
      expect(remaining(res)["15min"]!.r).toBe(LIMIT - 1 - i);
    }
    expect((await api.call(first, "GET", "/v1/athletes/me")).status).toBe(429);
    expect((await api.call(second, "GET", "/v1/athletes/me")).status).toBe(429);

    const forEve = await api.call(await api.pat(eve.id), "GET", "/v1/athletes/me");
    expect(forEve.status).toBe(200);
    expect(remaining(forEve)["15min"]!.r).toBe(LIMIT - 1);
  });

  it("keeps the counters in the database, so another instance sees and adds to the same count", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    await api.call(token, "GET", "/v1/athletes/me");
    await api.call(token, "GET", "/v1/athletes/me");

    // A second instance of the service is another process over the same database: it has
    // nothing in common with this one but the database handle it is given.
    const db = await api.db();
    const seen = await consumeRateLimit(db, `user:${p.id}`);
    expect(seen.windows.find((w) => w.name === "15min")!.used).toBe(3);
    await consumeRateLimit(db, `user:${p.id}`);
    await consumeRateLimit(db, `user:${p.id}`);

    const res = await api.call(token, "GET", "/v1/athletes/me");
    expect(res.status).toBe(429);
    expect((await res.json()).code).toBe("rate_limited");
  });

  it("counts concurrent requests exactly: batched together, each sees its own count, and past the limit only the excess is refused", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    const answers = await Promise.all(Array.from({ length: LIMIT + 3 }, () => api.call(token, "GET", "/v1/athletes/me")));
    const ok = answers.filter((r) => r.status === 200);
    expect(ok).toHaveLength(LIMIT);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(3);
    // Every admitted request was told a different remaining count: none was counted twice or lost.
    expect(ok.map((r) => remaining(r)["15min"]!.r).sort()).toEqual(Array.from({ length: LIMIT }, (_, i) => i));

    const db = await api.db();
    const direct = await Promise.all(Array.from({ length: 20 }, () => consumeRateLimit(db, `user:${p.id}`)));
    const used = direct.map((d) => d.windows.find((w) => w.name === "15min")!.used).sort((a, b) => a - b);
    expect(used).toEqual(Array.from({ length: 20 }, (_, i) => LIMIT + 4 + i));
  });

  it("fails the requests of a batch that could not be counted, and counts the next ones", async () => {
    const db = await api.db();
    const bucket = `test-broken:${Date.now()}`;
    // A window start the column cannot hold makes the whole statement fail, as an outage would.
    await expect(consumeRateLimit(db, bucket, -8.64e15)).rejects.toThrow(/range|invalid|timestamp/i);
    const after = await consumeRateLimit(db, bucket);
    expect(after.windows.map((w) => w.used)).toEqual([1, 1]);
  });

  it("commits counts without waiting for the disk, and leaves the connection's own setting as it was", async () => {
    const db = await api.db();
    await consumeRateLimit(db, `test-async:${Date.now()}`);
    // On the embedded database this is the very connection the count used.
    const [row] = rowsOf<{ synchronous_commit: string }>(await db.execute(sql`show synchronous_commit`));
    expect(row!.synchronous_commit).toBe("on");
  });

  it("counts a request that arrives just as a batch settles, at every microtask depth", async () => {
    // The database is stood in for here, and only here: the gap between a batch's answer and
    // the batcher marking itself idle is a few microtasks wide, and a real connection cannot
    // be made to answer another request's query inside it on demand. This one answers when told.
    for (let depth = 0; depth < 12; depth++) {
      const answers: ((rows: unknown[]) => void)[] = [];
      const fake = { execute: () => new Promise<unknown[]>((resolve) => answers.push(resolve)) } as unknown as Db;
      const first = consumeRateLimit(fake, "test-gap");
      await Promise.resolve();
      expect(answers).toHaveLength(1);
      let second: Promise<unknown> | undefined;
      const later = (n: number): void => {
        if (n === 0) second = consumeRateLimit(fake, "test-gap");
        else queueMicrotask(() => later(n - 1));
      };
      answers[0]!([]);
      later(depth);
      await first;
      for (let i = 0; i < 20; i++) await Promise.resolve();
      expect(second, `depth ${depth}`).toBeDefined();
      // The second count went out in a batch of its own, and is answered.
      expect(answers, `depth ${depth}`).toHaveLength(2);
      answers[1]!([]);
      await second;
    }
  });
});

describe("hostile input cannot fail other callers' counts", () => {
  it("a huge X-Forwarded-For among valid requests fails none of them, even through a trusted proxy", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    process.env.RATE_LIMIT_15MIN = "100000";
    resetEnvForTests();
    try {
      // Random, so that PostgreSQL cannot compress the key into its index.
      const hostile = () => api.call(null, "GET", "/v1/athletes/me", { headers: { "x-forwarded-for": randomBytes(4000).toString("hex") } });
      const calls = Array.from({ length: 220 }, (_, i) => (i % 11 === 5 ? hostile() : api.call(token, "GET", "/v1/athletes/me")));
      const statuses = (await Promise.all(calls)).map((r) => r.status);
      expect(statuses.filter((s) => s >= 500)).toEqual([]);
      expect(statuses.filter((s) => s === 200)).toHaveLength(200);
      expect(statuses.filter((s) => s === 401)).toHaveLength(20);
    } finally {
      process.env.RATE_LIMIT_15MIN = String(LIMIT);
      resetEnvForTests();
    }
  });

  it("a bucket of any length or content is stored under a bounded name", async () => {
    const db = await api.db();
    const long = `addr:${"x".repeat(10_000)}\u0000`;
    const first = await consumeRateLimit(db, long);
    const second = await consumeRateLimit(db, long);
    expect(second.windows[0]!.used).toBe(first.windows[0]!.used + 1);
    const lengths = rowsOf<{ n: number }>(await db.execute(sql`select max(length(bucket)) as n from rate_limit_counters`));
    expect(Number(lengths[0]!.n)).toBeLessThan(200);
  });

  it("a row the database refuses fails only the requests it counts, not the batch it shares", async () => {
    const db = await api.db();
    // A counter at the integer maximum: adding to it fails in PostgreSQL ("integer out of range").
    const full = `test-full-${Date.now()}`;
    const start = new Date(Math.floor(Date.now() / 900_000) * 900_000);
    await db.execute(sql`insert into rate_limit_counters (bucket, window_start, count) values (${`${full}:15m`}, ${start.toISOString()}, 2147483647)`);
    // Same turn of the event loop: one batch.
    const others = Array.from({ length: 10 }, (_, i) => consumeRateLimit(db, `test-ok-${i}-${Date.now()}`));
    const bad = consumeRateLimit(db, full);
    await expect(bad).rejects.toThrow();
    const ok = await Promise.all(others);
    expect(ok.map((r) => r.windows[0]!.used)).toEqual(Array(10).fill(1));
  });
});

/** A token kind whose lookup counts it, with what its tests need. */
type CountedKind = {
  name: string;
  /** A token for `userId`; `shareWith` gives another token counted in the same window as it. */
  token: (userId: string, shareWith?: KindToken) => Promise<KindToken>;
  /** The table whose rows the lookup reads. */
  table: string;
};
type KindToken = { token: string; bucket: string; revoke: () => Promise<void>; userId: string; clientId?: string };

const KINDS: CountedKind[] = [
  {
    name: "a personal access token",
    table: "personal_access_tokens",
    // Two PATs of one person share the person's window: the second is the first one's owner's.
    token: async (person, shareWith) => {
      const userId = shareWith?.userId ?? person;
      const token = await api.pat(userId);
      const db = await api.db();
      const revoke = async () => {
        await db.update(personalAccessTokens).set({ revokedAt: new Date() }).where(eq(personalAccessTokens.userId, userId));
      };
      return { token, bucket: `user:${userId}`, revoke, userId };
    },
  },
  {
    name: "an athlete's access token",
    table: "oauth_token_families",
    // Two athletes' tokens for one app share the app's window.
    token: async (userId, shareWith) => {
      const db = await api.db();
      const clientId = shareWith?.clientId ?? `rate-limited-${newId("grt")}`;
      if (!shareWith) await db.insert(oauthClients).values({ clientId, name: "Rate-limited app", kind: "public", redirectUris: ["http://127.0.0.1/callback"] });
      const grantId = newId("grt");
      const scopes: Scope[] = ["athlete.read"];
      await db.insert(oauthGrants).values({ id: grantId, clientId, userId, scopes });
      const familyId = newId("fam");
      await db.insert(oauthTokenFamilies).values({ id: familyId, grantId, scopes, resource: "v1" });
      const { token } = await issueAccessToken(db, { subject: userId, clientId, scopes, grantId, familyId });
      const revoke = async () => {
        await db.update(oauthTokenFamilies).set({ revokedAt: new Date() }).where(eq(oauthTokenFamilies.id, familyId));
      };
      return { token, bucket: `app:${clientId}`, revoke, userId, clientId };
    },
  },
];

describe.each(KINDS)("$name's lookup counts it", (kind) => {
  /** Requests counted so far in a bucket's 15-minute window. */
  const used = async (bucket: string) => (await peekRateLimit(await api.db(), bucket)).find((w) => w.name === "15min")!.used;

  it("in its owner's window, never once revoked: a revoked token counts per address only, whenever it was last used", async () => {
    const t = await kind.token((await api.person()).id);
    const from = { "x-forwarded-for": `192.0.2.${KINDS.indexOf(kind) + 41}` };
    const before = remaining(await api.call(null, "GET", "/v1/athletes/me", { headers: from }))["15min"]!.r;
    expect((await api.call(t.token, "GET", "/v1/athletes/me", { headers: from })).status).toBe(200);
    expect(await used(t.bucket)).toBe(1);
    await t.revoke();

    for (const left of [before - 1, before - 2]) {
      const res = await api.call(t.token, "GET", "/v1/athletes/me", { headers: from });
      expect(res.status).toBe(401);
      expect((await res.json()).code).toBe("token_revoked");
      // The answer names the address's window, as for any token that does not resolve.
      expect(remaining(res)["15min"]!.r).toBe(left);
      expect(await used(t.bucket)).toBe(1);
    }
  });

  it("gives concurrent requests of two tokens that share a window each its own count, and past the limit refuses only the excess", async () => {
    const first = await kind.token((await api.person()).id);
    const second = await kind.token((await api.person()).id, first);
    expect(second.token).not.toBe(first.token);
    const tokens = [first, second];
    const answers = await Promise.all(Array.from({ length: LIMIT + 3 }, (_, i) => api.call(tokens[i % 2]!.token, "GET", "/v1/athletes/me")));
    const ok = answers.filter((r) => r.status === 200);
    expect(ok).toHaveLength(LIMIT);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(3);
    expect(ok.map((r) => remaining(r)["15min"]!.r).sort()).toEqual(Array.from({ length: LIMIT }, (_, i) => i));
    expect(await used(first.bucket)).toBe(LIMIT + 3);
  });

  // Holding the lookup needs a second connection to watch it from: PostgreSQL's pool has it,
  // the embedded database has one connection (the request would wait for the test).
  it.runIf(process.env.TEST_DATABASE_URL)("in the same statement: the request waits for one round trip, and its count lands with its lookup", async () => {
    const t = await kind.token((await api.person()).id);
    expect((await api.call(t.token, "GET", "/v1/athletes/me")).status).toBe(200);
    const db = await api.db();
    let answer: Promise<Response> | undefined;
    await db.transaction(async (tx) => {
      // Every read of the lookup's table waits for this transaction.
      await tx.execute(sql.raw(`lock table ${kind.table} in access exclusive mode`));
      answer = api.call(t.token, "GET", "/v1/athletes/me");
      // Other statements on the table may wait too (the first request's record of the token's
      // last use is not awaited): look for one that reads the table and counts, as this
      // request's must.
      let counting = 0;
      for (let i = 0; i < 500 && counting === 0; i++) {
        await new Promise((r) => setTimeout(r, 10));
        counting = rowsOf<{ query: string }>(
          await db.execute(sql`select query from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and query like ${`%${kind.table}%`}`),
        ).filter((w) => /insert into "rate_limit_counters"/.test(w.query)).length;
      }
      expect(counting).toBeGreaterThan(0);
      // It has not run, so nothing of this request is counted yet.
      expect(await used(t.bucket)).toBe(1);
    });
    const res = await answer!;
    expect(res.status).toBe(200);
    expect(remaining(res)["15min"]!.r).toBe(LIMIT - 2);
    expect(await used(t.bucket)).toBe(2);
  });
});

describe("a personal access token past its expiry", () => {
  it("counts nowhere but per address", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    const db = await api.db();
    await db.update(personalAccessTokens).set({ expiresAt: new Date(Date.now() - 1_000) }).where(eq(personalAccessTokens.userId, p.id));
    const res = await api.call(token, "GET", "/v1/athletes/me", { headers: { "x-forwarded-for": "192.0.2.43" } });
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe("token_expired");
    expect(remaining(res)["15min"]!.r).toBe(LIMIT - 1);
    expect((await peekRateLimit(db, `user:${p.id}`)).find((w) => w.name === "15min")!.used).toBe(0);
  });
});
