import { afterEach, describe, expect, it, vi } from "vitest";
import { ConsoleApiError, MAX_RETRY_AFTER_MS, SESSION_ENDED_EVENT, consoleFetch, isClientError, parseRetryAfter, retryAfterOf } from "./api";

afterEach(() => {
  vi.unstubAllGlobals();
});

/** consoleFetch's error, or a failure of the test when it resolved. */
async function failure(answer: () => Promise<Response>, method?: string): Promise<ConsoleApiError> {
  vi.stubGlobal("fetch", vi.fn(answer));
  const error: unknown = await consoleFetch("/api/console/tokens", { method }).then(
    () => expect.unreachable("consoleFetch resolved"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConsoleApiError);
  return error as ConsoleApiError;
}

describe("consoleFetch's errors, in words a person can act on", () => {
  it("says the service could not be reached when no answer came, not the browser's 'Failed to fetch'", async () => {
    const e = await failure(() => Promise.reject(new TypeError("Failed to fetch")));
    expect(e.message).toBe("The service could not be reached. Check your connection and try again.");
    expect(e.status).toBe(0);
  });

  it("says the status of an error page that is not a problem document (a proxy's HTML 502)", async () => {
    const e = await failure(async () => new Response("<html><body>Bad Gateway</body></html>", { status: 502, headers: { "content-type": "text/html" } }));
    expect(e.message).toBe("The service answered with an error (502). Try again in a moment.");
    expect(e.status).toBe(502);
    expect(e.code).toBeUndefined();
  });

  it("says a form pressed again while its first press is still being saved (409 idempotency_key_in_use) in words, not the header's name", async () => {
    const problem = { detail: "A request with this Idempotency-Key is still in progress.", code: "idempotency_key_in_use" };
    const e = await failure(async () => Response.json(problem, { status: 409, headers: { "content-type": "application/problem+json", "retry-after": "1" } }), "POST");
    expect(e.message).toBe("This is still being saved from your earlier try. Wait a moment and try again.");
    expect(e.code).toBe("idempotency_key_in_use");
  });

  it("keeps a problem document's detail, code and field errors", async () => {
    const problem = { detail: "The request body is invalid: name: give the token a name", code: "invalid_request", errors: [{ field: "name", code: "invalid_request", detail: "give the token a name" }] };
    const e = await failure(async () => Response.json(problem, { status: 400, headers: { "content-type": "application/problem+json" } }));
    expect(e.message).toBe(problem.detail);
    expect(e.code).toBe("invalid_request");
    expect(e.fields).toEqual({ name: "give the token a name" });
  });

  it("says so when a successful answer is not JSON", async () => {
    const e = await failure(async () => new Response("<html>Sign in to the network</html>", { status: 200 }));
    expect(e.message).toMatch(/^The service answered with something the console cannot read \(200\)/);
  });

  it("answers the JSON of a successful answer, and null for an empty one", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => Response.json([{ id: "pat_1" }])));
    expect(await consoleFetch("/api/console/tokens")).toEqual([{ id: "pat_1" }]);
    vi.stubGlobal("fetch", vi.fn(async () => new Response(null, { status: 204 })));
    expect(await consoleFetch("/api/console/tokens/pat_1", { method: "DELETE" })).toBeNull();
  });
});

describe("an ended session (401), said once for the page by the banner", () => {
  const unauthorized = async () =>
    Response.json({ detail: "Sign in to use the console.", code: "token_missing" }, { status: 401, headers: { "content-type": "application/problem+json" } });

  it("tells the banner, and the action's own message says only that nothing was changed", async () => {
    const told = vi.fn();
    const target = new EventTarget();
    target.addEventListener(SESSION_ENDED_EVENT, told);
    vi.stubGlobal("window", target);
    for (const method of ["POST", "PATCH", "DELETE"]) {
      const e = await failure(unauthorized, method);
      expect(e.message).toBe("Nothing was changed.");
      expect(e.status).toBe(401);
    }
    expect(told).toHaveBeenCalledTimes(3);
  });

  it("so is a 429 that keeps the console's session challenge (too many requests without a session from one address); a signed-in person's 429 is a wait", async () => {
    const told = vi.fn();
    const target = new EventTarget();
    target.addEventListener(SESSION_ENDED_EVENT, told);
    vi.stubGlobal("window", target);
    const limited = (challenge: boolean) => async () =>
      Response.json(
        { detail: "The 15-minute limit of 3000 requests is used up; retry in 60 s.", code: "rate_limited" },
        { status: 429, headers: { "content-type": "application/problem+json", "retry-after": "60", ...(challenge ? { "www-authenticate": 'Session realm="console"' } : {}) } },
      );
    const ended = await failure(limited(true));
    expect(ended.status).toBe(401);
    expect(ended.message).toBe("Not loaded.");
    expect(told).toHaveBeenCalledTimes(1);
    const waiting = await failure(limited(false));
    expect(waiting.status).toBe(429);
    expect(retryAfterOf(waiting)).toBe(60_000);
    expect(told).toHaveBeenCalledTimes(1);
  });

  it("a read's error says only that it was not loaded, not the banner's words again", async () => {
    vi.stubGlobal("window", new EventTarget());
    const e = await failure(unauthorized);
    expect(e.message).toBe("Not loaded.");
    expect(e.message).not.toMatch(/session|sign in/i);
    expect(isClientError(e)).toBe(true);
  });
});

describe("which failures are worth asking again", () => {
  it("retries no answer and a server's trouble, never a 4xx", () => {
    expect(isClientError(new ConsoleApiError("…", 404, "not_found"))).toBe(true);
    expect(isClientError(new ConsoleApiError("The service could not be reached. …", 0))).toBe(false);
    expect(isClientError(new ConsoleApiError("…", 502))).toBe(false);
    expect(isClientError(new TypeError("Failed to fetch"))).toBe(false);
  });

  it("takes a 429 as a wait, not as final: the limit's window reopens", () => {
    expect(isClientError(new ConsoleApiError("…", 429, "rate_limited"))).toBe(false);
    expect(isClientError(new ConsoleApiError("Not loaded.", 401, "token_missing"))).toBe(true);
  });
});

describe("how long a 429 or a 503 asks to be left alone", () => {
  const limited = (status: number, headers: Record<string, string>) => async () =>
    Response.json({ detail: "The console's 15-minute limit of 3000 requests is used up; retry in 3 s.", code: "rate_limited" }, { status, headers: { "content-type": "application/problem+json", ...headers } });

  it("follows the answer's Retry-After, in seconds or as a date", async () => {
    expect(retryAfterOf(await failure(limited(429, { "retry-after": "3" })))).toBe(3000);
    expect(retryAfterOf(await failure(limited(503, { "retry-after": "7" })))).toBe(7000);
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", Date.parse("Wed, 21 Oct 2015 07:28:00 GMT"))).toBe(30_000);
    expect(parseRetryAfter("0")).toBe(0);
  });

  it("waits at most a minute, and a few seconds when the answer says nothing or nonsense", async () => {
    expect(retryAfterOf(await failure(limited(429, { "retry-after": "900" })))).toBe(MAX_RETRY_AFTER_MS);
    expect(MAX_RETRY_AFTER_MS).toBe(60_000);
    expect(retryAfterOf(await failure(limited(429, {})))).toBe(5000);
    expect(retryAfterOf(await failure(limited(429, { "retry-after": "soon" })))).toBe(5000);
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", Date.parse("Wed, 21 Oct 2015 08:00:00 GMT"))).toBe(0);
  });

  it("is no wait for other errors", async () => {
    expect(retryAfterOf(await failure(limited(404, { "retry-after": "3" })))).toBeNull();
    expect(retryAfterOf(new ConsoleApiError("…", 500))).toBeNull();
    expect(retryAfterOf(new TypeError("Failed to fetch"))).toBeNull();
  });
});
