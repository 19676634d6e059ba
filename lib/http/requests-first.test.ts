import { readFileSync } from "node:fs";
import net from "node:net";
import { sql } from "drizzle-orm";
import { getDb, rowsOf } from "../db/client";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SAMPLES_DIR } from "../files/testing/samples";
import { setupApi } from "../testing/fixtures";
import { bulkStepsWaiting, requestStarted, requestsFirst, requestsInFlight } from "./requests-first";

/** Whether a promise has settled, as far as the event loop has got. */
function tracked(p: Promise<unknown>): { settled: () => boolean } {
  let done = false;
  void p.then(() => (done = true));
  return { settled: () => done };
}

describe("requests first: the gate bulk work passes (fake timers: every wait below is the gate's own, not a sleep)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("lets a bulk step go at once when no request is being answered", async () => {
    vi.useFakeTimers();
    const step = tracked(requestsFirst(10_000));
    await vi.advanceTimersByTimeAsync(0);
    expect(step.settled()).toBe(true);
  });

  it("holds a bulk step while a request is being answered, and lets it go on the turn after the request ends", async () => {
    vi.useFakeTimers();
    const end = requestStarted();
    const step = tracked(requestsFirst(10_000));
    await vi.advanceTimersByTimeAsync(9_999);
    expect(step.settled()).toBe(false);
    expect(bulkStepsWaiting()).toBe(1);
    end();
    await vi.advanceTimersByTimeAsync(0);
    expect(step.settled()).toBe(true);
    expect(bulkStepsWaiting()).toBe(0);
  });

  it("lets held steps go one per turn, so a request that starts between two goes before the second", async () => {
    vi.useFakeTimers();
    const end = requestStarted();
    let second: () => void = () => {};
    const first = tracked(
      requestsFirst(10_000).then(() => {
        // The first step's work starts a request (as a client's request arriving would).
        second = requestStarted();
      }),
    );
    const next = tracked(requestsFirst(10_000));
    end();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(first.settled()).toBe(true);
    expect(next.settled()).toBe(false);
    second();
    await vi.advanceTimersByTimeAsync(0);
    expect(next.settled()).toBe(true);
  });

  it("never holds a step past its longest wait, however long requests keep coming", async () => {
    vi.useFakeTimers();
    const end = requestStarted();
    const step = tracked(requestsFirst(200));
    await vi.advanceTimersByTimeAsync(199);
    expect(step.settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(step.settled()).toBe(true);
    expect(bulkStepsWaiting()).toBe(0);
    end();
  });

  it("does not count a request while it waits on something that is not the thread's work (its body arriving), and counts it again after", async () => {
    vi.useFakeTimers();
    const before = requestsInFlight();
    const end = requestStarted();
    let arrive: () => void = () => {};
    const body = end.notWhile(() => new Promise<void>((resolve) => (arrive = resolve)));
    expect(requestsInFlight()).toBe(before);
    const step = tracked(requestsFirst(10_000));
    await vi.advanceTimersByTimeAsync(0);
    expect(step.settled()).toBe(true);
    arrive();
    await body;
    expect(requestsInFlight()).toBe(before + 1);
    end();
    expect(requestsInFlight()).toBe(before);
  });

  it("counts a request's end once, however often it is called", async () => {
    vi.useFakeTimers();
    const before = requestsInFlight();
    const a = requestStarted();
    const b = requestStarted();
    a();
    a();
    expect(requestsInFlight()).toBe(before + 1);
    const step = tracked(requestsFirst(10_000));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(step.settled()).toBe(false);
    b();
    await vi.advanceTimersByTimeAsync(0);
    expect(step.settled()).toBe(true);
    expect(requestsInFlight()).toBe(before);
  });
});

describe("requests first, over real HTTP", () => {
  const api = setupApi();
  const fit = readFileSync(path.join(SAMPLES_DIR, "fit", "activity-small-fenix2-run.fit"));

  it("stops counting a request once it has its answer, a success or a problem (a count left behind would hold bulk work)", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    expect(requestsInFlight()).toBe(0);
    const ok = await fetch(`${api.url}/v1/athletes/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    const refused = await fetch(`${api.url}/v1/athletes/me`, { headers: { authorization: "Bearer aas_pat_nonsense" } });
    expect(refused.status).toBe(401);
    const badUpload = await fetch(`${api.url}/v1/athletes/me/uploads`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: "not a form" });
    expect(badUpload.status).toBeGreaterThanOrEqual(400);
    const oauth = await fetch(`${api.url}/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "grant_type=client_credentials" });
    expect(oauth.status).toBe(401);
    const mcp = await fetch(`${api.url}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(mcp.status).toBe(401);
    expect(requestsInFlight()).toBe(0);
  });

  it("does not count a request whose JSON body is still arriving: a stalled body holds no one's bulk work", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.write"]);
    const { port } = new URL(api.url);
    const socket = net.connect(Number(port), "127.0.0.1");
    try {
      await new Promise<void>((resolve) => socket.once("connect", resolve));
      // Headers and 7 of the 100 bytes declared, then nothing more.
      socket.write(
        `POST /v1/athletes/me/activities HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name"`,
      );
      // Let in: its token's lookup counted it against the owner's window (CONTRACT §10).
      const counted = async () => {
        const rows = rowsOf<{ n: number }>(await (await getDb()).execute(sql`select coalesce(sum(count), 0)::int as n from rate_limit_counters where bucket like ${`%${p.id}%`}`));
        return rows[0]!.n;
      };
      await vi.waitFor(async () => expect(await counted()).toBeGreaterThan(0), { timeout: 10_000, interval: 5 });
      // A bulk step asked now goes once the request is reading its body, not after the gate's
      // longest wait (nor never: this body never ends).
      let went = false;
      const step = requestsFirst(60_000).then(() => (went = true));
      await vi.waitFor(() => expect(went).toBe(true), { timeout: 5_000, interval: 1 });
      await step;
    } finally {
      socket.destroy();
    }
  });

  it("holds an upload's body while another request is being answered, and takes it once that one has its answer", async () => {
    const p = await api.person();
    const token = await api.pat(p.id, ["activities.write", "activities.read"]);
    const form = new FormData();
    form.set("file", new Blob([new Uint8Array(fit)]), "run.fit");
    const end = requestStarted();
    let answered = false;
    const upload = fetch(`${api.url}/v1/athletes/me/uploads`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form }).then((res) => {
      answered = true;
      return res;
    });
    try {
      // The upload is let in (authenticated, its scope checked), then waits at the gate, its body unread.
      await vi.waitFor(() => expect(bulkStepsWaiting()).toBe(1), { timeout: 10_000, interval: 1 });
      expect(answered).toBe(false);
      // It stopped counting as a request being answered: only the one held here is.
      expect(requestsInFlight()).toBe(1);
    } finally {
      end();
    }
    const res = await upload;
    expect(res.status).toBe(202);
    expect(requestsInFlight()).toBe(0);
  });
});
