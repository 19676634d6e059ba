// Generated hostile requests over every /v1, OAuth and console route (fast-check arbitraries),
// and the judgement of what came back: never a 5xx, and every 4xx in the family's error shape
// (a problem document with a code of CONTRACT §3, or RFC 6749's shape on the OAuth endpoints).
// Used by the fault scenario (`npm run bench -- faults`) and by the property tests.
import fc from "fast-check";
import { SPORT_TYPES } from "../activities/schemas";
import { SCOPE_NAMES } from "../auth/scopes";
import { EVENT_TYPES } from "../events/catalog";
import { METRIC_TYPES } from "../metrics/schemas";
import type { RawAnswer } from "./raw-http";

export type Family = "v1" | "mcp" | "oauth" | "authorize" | "console";

/** A request as bytes go out: header values and bodies are latin1 strings (one char a byte). */
export type HostileRequest = {
  family: Family;
  /** The route template it was generated from, for counting. */
  route: string;
  method: string;
  target: string;
  headers: [string, string][];
  body: { kind: "none" } | { kind: "bytes"; bytes: string } | { kind: "oversize"; bytes: number };
  /** Send the head and part of the body, then stop: a client that gave up mid-body. */
  truncatedTransport: boolean;
  /** What was made hostile, in words. */
  notes: string[];
};

/** The objects and credentials the requests address; unknown ids are generated besides these. */
export type HostileContext = {
  host: string;
  athleteId: string;
  otherAthleteId: string;
  activityId: string;
  teamId: string;
  /** A subscription the fuzzer may change but not delete, and one it may delete. */
  webhookId: string;
  spareWebhookId: string;
  deliveryId: string;
  /** Console ids of the signed-in person's own things (deleting them is fine). */
  consoleTokenId: string;
  consoleClientId: string;
  consoleWebhookId: string;
  consoleGrantId: string;
  pat: string;
  appToken: string;
  client: { id: string; secret: string };
  publicClientId: string;
  /** `name=value; …` of a signed-in console session, when there is one. */
  sessionCookie?: string;
};

// CONTRACT §3, the table of codes per status.
export const CONTRACT_CODES: Record<string, number> = {
  invalid_request: 400,
  invalid_date: 400,
  invalid_enum_value: 400,
  invalid_parameter_combination: 400,
  invalid_cursor: 400,
  webhook_verification_failed: 400,
  invalid_webhook_url: 400,
  unsupported_file_type: 400,
  token_missing: 401,
  token_invalid: 401,
  token_expired: 401,
  token_revoked: 401,
  subscription_required: 402,
  insufficient_scope: 403,
  athlete_not_reachable: 403,
  team_not_reachable: 403,
  client_credentials_required: 403,
  client_credentials_not_allowed: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  idempotency_key_in_use: 409,
  payload_too_large: 413,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
};

/** RFC 6749 §5.2, RFC 7009 §2.2.1, RFC 8707 §2 and the token endpoint's limit. */
export const OAUTH_ERRORS = new Set([
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "invalid_scope",
  "invalid_target",
  "unsupported_token_type",
  "slow_down",
  "invalid_redirect_uri",
  "invalid_client_metadata",
]);

const METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS"] as const;

// ---- values ---------------------------------------------------------------------------------

const latin1 = (s: string) => Buffer.from(s, "utf8").toString("latin1");

/** Strings people and programs get wrong: empty, blank, NUL, lone surrogates, huge, RTL, emoji. */
const nastyString = fc.oneof(
  fc.constantFrom("", " ", "\u0000", "a\u0000b", "\ud800", "\udfff", "x\u202ey", "🏃‍♀️", "NaN", "null", "undefined", "true", "-0", "0x10", "1e999", "'; drop table users; --", "%00", "../../etc/passwd", "<script>alert(1)</script>"),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.integer({ min: 201, max: 70_000 }).map((n) => "x".repeat(n)),
);

/** A header value: usually bytes an HTTP parser lets through, now and then control characters it must refuse. */
const headerValue = fc.oneof(
  { weight: 5, arbitrary: nastyString.map((s) => latin1(s).replace(/[\x00-\x08\x0a-\x1f\x7f]/g, "")) },
  nastyString.map(latin1),
);

const impossibleDate = fc.constantFrom(
  "2026-02-30",
  "2025-02-29",
  "2026-13-01",
  "2026-00-10",
  "0000-00-00",
  "2026-1-1",
  "99999-01-01",
  "-2026-01-01",
  "2026-06-31",
  "2026/03/01",
  "01.03.2026",
  "20260301",
  "2026-03-01T00:00:00",
);
const impossibleLocalTime = fc.constantFrom(
  "2026-02-30T07:00:00",
  "2026-03-01T24:00:00",
  "2026-03-01T07:60:00",
  "2026-03-01T07:30:60",
  "2026-03-01T07:30:00Z",
  "2026-03-01T07:30:00+01:00",
  "2026-03-01T07:30:00.123456789",
  "2026-03-01 07:30:00",
  "2026-03-01",
  "T07:30:00",
  // A wall-clock time that does not exist in Europe/Oslo (spring forward) and one that exists twice.
  "2026-03-29T02:30:00",
  "2026-10-25T02:30:00",
  "10000-01-01T00:00:00",
  "0001-01-01T00:00:00",
);
const goodDate = fc.date({ min: new Date("1990-01-01"), max: new Date("2030-12-31"), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
const goodLocalTime = fc.date({ min: new Date("1990-01-01"), max: new Date("2030-12-31"), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 19));
const date = fc.oneof({ weight: 2, arbitrary: impossibleDate }, goodDate, nastyString);
const localTime = fc.oneof({ weight: 2, arbitrary: impossibleLocalTime }, goodLocalTime, nastyString);

const numberish = fc.oneof(
  fc.constantFrom(0, -1, 1, 1.5, -0.0001, 2 ** 31, 2 ** 53 + 1, Number.MAX_VALUE, -Number.MAX_VALUE, 1e-300),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);
/** Written into JSON text as is: literals JSON.stringify cannot produce. */
const rawNumberText = fc.constantFrom("1e999", "-1e999", "NaN", "Infinity", "01", "1.", ".5", "0x10", "9".repeat(400), "1_000", "+1");

// Valid values come from the schemas they must pass; the near misses are written here.
const sportType = fc.oneof(fc.constantFrom(...SPORT_TYPES), fc.constantFrom("RUN", "run ", "jog", "rün", "", "Run"), nastyString);
const metricType = fc.oneof(fc.constantFrom(...METRIC_TYPES), fc.constantFrom("weight", "BODY_MASS_KG", "steps"), nastyString);
const scope = fc.oneof(fc.constantFrom(...SCOPE_NAMES), fc.constantFrom("location.write", "admin", "*", "activities:read", "openid"), nastyString);
const eventType = fc.oneof(fc.constantFrom(...EVENT_TYPES), fc.constantFrom("activity.archived", "*", "activity.*", "ping"), nastyString);
/** Webhook and redirect URLs, all on loopback: the service must not be sent anywhere else. */
const loopbackUrl = fc.oneof(
  fc.constantFrom(
    "http://127.0.0.1:9/hook",
    "https://127.0.0.1/hook",
    "http://localhost:1/x",
    "http://[::1]:1/",
    "http://127.0.0.1:8976/callback",
    "ftp://127.0.0.1/x",
    "javascript:alert(1)",
    "data:text/plain,hi",
    "http://user:pass@127.0.0.1:1/",
    "http://127.0.0.1:99999/",
    "http://127.0.0.1:1/" + "a".repeat(5000),
    "not a url",
    "//127.0.0.1/x",
    "http://127.0.0.1:1/#frag",
    "http://127.1/",
    "http://2130706433/",
  ),
  fc.integer({ min: 1, max: 65535 }).map((p) => `http://127.0.0.1:${p}/h`),
  nastyString,
);
const idLike = (valid: string) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant(valid) },
    fc.constantFrom("me", "0", "-1", "null", "act_", "ath_0000000000000000000000", valid.toUpperCase(), valid + "x", valid.slice(0, -1), "%2e%2e", "..", "%00", "%FF%FE", "a%2Fb", "%E2%80%AE"),
    fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 30 }).map((s) => encodeURIComponent(s)),
    fc.integer({ min: 300, max: 9000 }).map((n) => "a".repeat(n)),
  );

/** Any JSON value, small. */
const anyJson = fc.jsonValue({ maxDepth: 3 });
/** A field's value: usually of a wrong type or out of range, sometimes right. */
const fieldValue = (right: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 2, arbitrary: right }, anyJson, numberish, nastyString, fc.constant(null), fc.array(anyJson, { maxLength: 3 }), fc.constant({}));

/** An object of the given fields, each kept, dropped or broken, plus unknown members now and then. */
function objectOf(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(fields).map(([k, a]) => fc.option(fieldValue(a).map((v) => [k, v] as const), { freq: 4, nil: undefined }));
  return fc
    .tuple(fc.tuple(...entries), fc.option(fc.dictionary(nastyString, anyJson, { maxKeys: 3 }), { freq: 5, nil: undefined }))
    .map(([kept, extra]) => Object.assign(Object.fromEntries(kept.filter((e) => e !== undefined)), extra ?? {}));
}

const activityBody = objectOf({
  name: fc.oneof(fc.constant("Morning run"), nastyString),
  sport_type: sportType,
  start_local: localTime,
  elapsed_time_s: numberish,
  moving_time_s: numberish,
  distance_m: numberish,
  elevation_gain_m: numberish,
  average_speed_mps: numberish,
  max_speed_mps: numberish,
  average_heart_rate_hz: numberish,
  max_heart_rate_hz: numberish,
  average_power_w: numberish,
  energy_j: numberish,
});
const metricBody = objectOf({ type: metricType, value: numberish, measured_local: localTime });
const toolName = fc.oneof(fc.constantFrom("get_profile", "list_activities", "get_activity", "get_activity_streams", "list_metrics", "get_training_summary", "list_team_athletes", "nope"), nastyString);
const toolArgs = objectOf({
  athlete_id: fc.constantFrom("me", "ath_x", ""),
  id: fc.constantFrom("act_x", ""),
  start: localTime,
  end: localTime,
  limit: numberish,
  cursor: nastyString,
  keys: fc.constantFrom("time_s,latlng", "latlng", "nope", ""),
  resolution: fc.constantFrom("low", "medium", "full", ""),
  group_by: fc.constantFrom("week", "month", "day"),
  type: metricType,
});
/** JSON-RPC messages to /mcp: calls of every tool with broken arguments, other methods, batches and nonsense. */
const mcpBody = fc.oneof(
  objectOf({ jsonrpc: fc.constantFrom("2.0", "1.0"), id: fc.oneof(fc.integer(), nastyString), method: fc.constant("tools/call"), params: objectOf({ name: toolName, arguments: toolArgs }) }),
  objectOf({ jsonrpc: fc.constant("2.0"), id: fc.integer(), method: fc.constantFrom("tools/list", "initialize", "ping", "resources/list", "nope", ""), params: anyJson }),
  fc.array(objectOf({ jsonrpc: fc.constant("2.0"), id: fc.integer(), method: fc.constantFrom("tools/call", "tools/list"), params: objectOf({ name: toolName, arguments: toolArgs }) }), { maxLength: 3 }),
  anyJson,
);
const webhookBody = objectOf({ url: loopbackUrl, events: fc.array(eventType, { maxLength: 6 }), verify_token: nastyString, status: fc.constantFrom("active", "disabled", "paused"), redeliver_failed: fc.boolean() });
const appBody = objectOf({
  name: nastyString,
  kind: fc.constantFrom("confidential", "public", "native", ""),
  redirect_uris: fc.array(loopbackUrl, { maxLength: 4 }),
  logo_url: loopbackUrl,
  homepage_url: loopbackUrl,
});
const tokenBody = objectOf({ name: nastyString, scopes: fc.array(scope, { maxLength: 5 }), expires_in_days: fc.constantFrom(7, 30, 90, 365, null, 0, 8, -7) });
const profileBody = objectOf({ name: nastyString, timezone: fc.constantFrom("Europe/Oslo", "UTC", "Mars/Olympus", "europe/oslo", "GMT+25", ""), uses_metric_units: fc.boolean() });
const teamBody = objectOf({ name: nastyString });
const invitationBody = objectOf({ email: fc.oneof(fc.emailAddress(), nastyString) });

// ---- bodies as bytes ------------------------------------------------------------------------

type BodyPlan = { body: HostileRequest["body"]; contentType?: string; notes: string[] };

const contentTypes = fc.oneof(
  { weight: 6, arbitrary: fc.constant("application/json") },
  fc.constantFrom(
    "application/json; charset=utf-8",
    "application/json; charset=iso-8859-1",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/problem+json",
    "APPLICATION/JSON",
    "application/json, text/plain",
    "",
  ),
  headerValue,
);

/** A JSON body from `value`, delivered whole or broken in one of many ways. */
function jsonBody(value: fc.Arbitrary<unknown>): fc.Arbitrary<BodyPlan> {
  return fc
    .tuple(
      value,
      fc.oneof(
        { weight: 8, arbitrary: fc.constant("whole" as const) },
        fc.constantFrom(
          "truncated",
          "bad-utf8",
          "bom",
          "utf16",
          "trailing-garbage",
          "not-json",
          "empty",
          "raw-number",
          "deep",
          "oversize",
          "wrong-top-level",
          "duplicate-keys",
        ),
      ),
      fc.nat(),
      contentTypes,
      rawNumberText,
      fc.option(fc.constant(true), { freq: 12, nil: undefined }),
    )
    .map(([v, how, n, contentType, rawNumber, noContentType]) => {
      const text = JSON.stringify(v) ?? "null";
      const bytes = (s: string): HostileRequest["body"] => ({ kind: "bytes", bytes: s });
      const utf8 = latin1(text);
      const ct = noContentType ? undefined : contentType;
      switch (how) {
        case "whole":
          return { body: bytes(utf8), contentType: ct, notes: [] };
        case "truncated":
          return { body: bytes(utf8.slice(0, n % Math.max(1, utf8.length))), contentType: ct, notes: ["body: truncated JSON"] };
        case "bad-utf8": {
          const at = utf8.length ? n % utf8.length : 0;
          const bad = ["\xff", "\xc3\x28", "\xed\xa0\x80", "\xf0\x28\x8c\xbc", "\xc0\xaf", "\x80"][n % 6]!;
          return { body: bytes(utf8.slice(0, at) + bad + utf8.slice(at)), contentType: ct, notes: ["body: invalid UTF-8"] };
        }
        case "bom":
          return { body: bytes("\xef\xbb\xbf" + utf8), contentType: ct, notes: ["body: UTF-8 byte order mark"] };
        case "utf16":
          return { body: bytes(Buffer.from(text, "utf16le").toString("latin1")), contentType: ct, notes: ["body: UTF-16"] };
        case "trailing-garbage":
          return { body: bytes(utf8 + "}{,"), contentType: ct, notes: ["body: JSON then garbage"] };
        case "not-json":
          return { body: bytes(latin1(["{name: 'x'}", "undefined", "{", "[1,]", "'str'", "{\"a\":1,}", "\u0000"][n % 7]!)), contentType: ct, notes: ["body: not JSON"] };
        case "empty":
          return { body: bytes(""), contentType: ct, notes: ["body: empty"] };
        case "raw-number":
          return { body: bytes(`{"elapsed_time_s":${rawNumber},"value":${rawNumber},"distance_m":${rawNumber}}`), contentType: ct, notes: [`body: number ${rawNumber.slice(0, 20)}`] };
        case "deep": {
          const depth = [1_000, 10_000, 100_000][n % 3]!;
          return { body: bytes("[".repeat(depth) + "]".repeat(depth)), contentType: ct, notes: [`body: ${depth} nested arrays`] };
        }
        case "oversize":
          return { body: { kind: "oversize" as const, bytes: 1024 * 1024 + 1 + (n % 200_000) }, contentType: "application/json", notes: ["body: over 1 MiB"] };
        case "wrong-top-level":
          return { body: bytes(latin1(JSON.stringify([[v], "x", 1, true, null][n % 5]))), contentType: ct, notes: ["body: wrong top-level type"] };
        case "duplicate-keys":
          return { body: bytes(utf8.startsWith("{") && utf8.length > 2 ? `{"name":"a","name":{"x":1},${utf8.slice(1)}` : utf8), contentType: ct, notes: ["body: duplicate keys"] };
      }
    });
}

/** An application/x-www-form-urlencoded body, whole or broken. */
function formBody(fields: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<BodyPlan> {
  const entries = Object.entries(fields).map(([k, a]) => fc.option(a.map((v) => [k, v] as const), { freq: 3, nil: undefined }));
  return fc
    .tuple(
      fc.tuple(...entries),
      fc.oneof(
        { weight: 6, arbitrary: fc.constant("whole" as const) },
        fc.constantFrom("repeated", "bad-percent", "bad-utf8", "json", "oversize", "truncated"),
      ),
      fc.nat(),
      fc.oneof({ weight: 6, arbitrary: fc.constant("application/x-www-form-urlencoded") }, contentTypes),
    )
    .map(([kept, how, n, contentType]) => {
      const pairs = kept.filter((e) => e !== undefined) as (readonly [string, string])[];
      const encoded = new URLSearchParams(pairs as [string, string][]).toString();
      const bytes = (s: string): HostileRequest["body"] => ({ kind: "bytes", bytes: s });
      switch (how) {
        case "whole":
          return { body: bytes(encoded), contentType, notes: [] };
        case "repeated":
          return { body: bytes(`${encoded}&${encoded}&grant_type=refresh_token&grant_type=client_credentials`), contentType, notes: ["form: repeated parameters"] };
        case "bad-percent":
          return { body: bytes(`${encoded}&code=%ZZ%&token=%`), contentType, notes: ["form: bad percent-encoding"] };
        case "bad-utf8":
          return { body: bytes(`${encoded}&code=%FF%FE&token=\xff\xfe`), contentType, notes: ["form: invalid UTF-8"] };
        case "json":
          return { body: bytes(latin1(JSON.stringify(Object.fromEntries(pairs)))), contentType: "application/json", notes: ["form: JSON instead"] };
        case "oversize":
          return { body: { kind: "oversize" as const, bytes: 1024 * 1024 + 1 + (n % 100_000) }, contentType, notes: ["form: over 1 MiB"] };
        case "truncated":
          return { body: bytes(encoded.slice(0, n % Math.max(1, encoded.length))), contentType, notes: ["form: truncated"] };
      }
    });
}

const noBody: fc.Arbitrary<BodyPlan> = fc.constant({ body: { kind: "none" }, notes: [] });

// ---- routes ---------------------------------------------------------------------------------

type Route = {
  family: Family;
  template: string;
  /** The methods it serves; others are generated too, less often. */
  methods: string[];
  params?: (c: HostileContext) => Record<string, fc.Arbitrary<string>>;
  query?: (c: HostileContext) => Record<string, fc.Arbitrary<string>>;
  body?: fc.Arbitrary<BodyPlan>;
  auth: (c: HostileContext) => fc.Arbitrary<[string, string][]>;
};

const badToken = fc.oneof(
  fc.constantFrom("aas_pat_", "aas_pat_" + "A".repeat(38), "eyJhbGciOiJub25lIn0.e30.", "eyJ" + "A".repeat(5000), "null", ""),
  headerValue,
);
const bearerVariants = (good: string) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant<[string, string][]>([["Authorization", `Bearer ${good}`]]) },
    fc.constant<[string, string][]>([]),
    badToken.map((t): [string, string][] => [["Authorization", `Bearer ${t}`]]),
    fc.constantFrom<[string, string][]>(
      [["Authorization", `bearer ${good}`]],
      [["Authorization", `Bearer  ${good}`]],
      [["Authorization", `Basic ${good}`]],
      [["Authorization", "Bearer"]],
      [["Authorization", `Bearer ${good}`], ["Authorization", "Bearer other"]],
      [["Authorization", `Bearer ${good}\x01`]],
      [["Authorization", `Bearer ${"x".repeat(15_000)}`]],
    ),
  );
const v1Auth = (c: HostileContext) => bearerVariants(c.pat);
const appAuth = (c: HostileContext) => fc.oneof({ weight: 3, arbitrary: bearerVariants(c.appToken) }, bearerVariants(c.pat));
const cookieAuth = (c: HostileContext) => {
  const cookie = c.sessionCookie ?? "";
  const origin = `http://${c.host}`;
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant<[string, string][]>([["Cookie", cookie], ["Origin", origin]]) },
    fc.constant<[string, string][]>([["Cookie", cookie]]),
    fc.constant<[string, string][]>([["Cookie", cookie], ["Origin", "http://evil.example"]]),
    fc.constant<[string, string][]>([["Cookie", cookie], ["Sec-Fetch-Site", "same-origin"]]),
    fc.constant<[string, string][]>([["Origin", origin]]),
    headerValue.map((s): [string, string][] => [["Cookie", s], ["Origin", origin]]),
    fc.constant<[string, string][]>([["Cookie", cookie + "; " + "a=b; ".repeat(2000)], ["Origin", origin]]),
    headerValue.map((s): [string, string][] => [["Cookie", cookie], ["Origin", s]]),
  );
};
const basicAuth = (c: HostileContext) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant<[string, string][]>([["Authorization", `Basic ${Buffer.from(`${c.client.id}:${c.client.secret}`).toString("base64")}`]]) },
    fc.constant<[string, string][]>([]),
    fc.constantFrom<[string, string][]>(
      [["Authorization", "Basic"]],
      [["Authorization", "Basic !!!notbase64"]],
      [["Authorization", `Basic ${Buffer.from("no-colon").toString("base64")}`]],
      [["Authorization", `Basic ${Buffer.from(`${c.client.id}:wrong`).toString("base64")}`]],
      [["Authorization", `Basic ${Buffer.from(`%ZZ:%`).toString("base64")}`]],
      [["Authorization", `Basic ${Buffer.from("\xff\xfe:\xff", "latin1").toString("base64")}`]],
      [["Authorization", `Basic ${"A".repeat(12_000)}`]],
      [["Authorization", `Bearer ${c.pat}`]],
    ),
    nastyString.map((s): [string, string][] => [["Authorization", `Basic ${Buffer.from(s).toString("base64")}`]]),
  );
const none = () => fc.constant<[string, string][]>([]);

const listQuery = { limit: fc.oneof(fc.constantFrom("1", "200", "0", "201", "-1", "1.5", "1e2", "", "abc", "99999999999999999999"), nastyString), cursor: fc.oneof(fc.constantFrom("", "eyJ9", "AAAA", "!!!!", "%FF"), fc.base64String({ maxLength: 80 }), nastyString) };

function routes(): Route[] {
  const athlete = (c: HostileContext) => ({ athlete_id: fc.oneof(fc.constant("me"), idLike(c.athleteId), idLike(c.otherAthleteId)) });
  const webhook = (c: HostileContext) => ({ id: idLike(c.webhookId) });
  const consoleApp = (c: HostileContext) => ({ client_id: idLike(c.consoleClientId) });
  const consoleHook = (c: HostileContext) => ({ client_id: idLike(c.consoleClientId), id: idLike(c.consoleWebhookId) });
  const authorizeQuery = (c: HostileContext): Record<string, fc.Arbitrary<string>> => ({
    response_type: fc.oneof(fc.constantFrom("code", "token", "code id_token", ""), nastyString),
    client_id: fc.oneof(fc.constantFrom(c.client.id, c.publicClientId, "http://127.0.0.1:9/client.json", "https://127.0.0.1/client"), nastyString),
    redirect_uri: fc.oneof(fc.constantFrom("http://127.0.0.1:8976/callback", "http://127.0.0.1:1234/callback"), loopbackUrl),
    scope: fc.oneof(fc.array(scope, { maxLength: 4 }).map((s) => s.join(" ")), nastyString),
    state: nastyString,
    code_challenge: fc.oneof(fc.constantFrom("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "short", ""), nastyString),
    code_challenge_method: fc.constantFrom("S256", "plain", "s256", ""),
    resource: fc.oneof(fc.constantFrom(`http://${c.host}/v1`, `http://${c.host}/mcp`, "http://127.0.0.1/v1"), nastyString),
    prompt: fc.constantFrom("none", "consent", "login", ""),
  });
  return [
    { family: "v1", template: "/v1/athletes/{athlete_id}", methods: ["GET"], params: athlete, auth: v1Auth },
    { family: "v1", template: "/v1/athletes/{athlete_id}/activities", methods: ["GET"], params: athlete, query: () => ({ start: date, end: date, sport_type: sportType, ...listQuery }), auth: v1Auth },
    { family: "v1", template: "/v1/athletes/me/activities", methods: ["POST"], body: jsonBody(activityBody), auth: v1Auth },
    { family: "v1", template: "/v1/activities/{activity_id}", methods: ["GET", "PATCH"], params: (c) => ({ activity_id: idLike(c.activityId) }), body: jsonBody(activityBody), auth: v1Auth },
    {
      family: "v1",
      template: "/v1/activities/{activity_id}/streams",
      methods: ["GET"],
      params: (c) => ({ activity_id: idLike(c.activityId) }),
      query: () => ({
        keys: fc.oneof(fc.constantFrom("time_s,latlng", "heart_rate_hz", "", "nope", "time_s,,power_w", "TIME_S"), nastyString),
        resolution: fc.oneof(fc.constantFrom("low", "medium", "high", "full", "", "FULL"), nastyString),
      }),
      auth: v1Auth,
    },
    { family: "v1", template: "/v1/activities/{activity_id}/laps", methods: ["GET"], params: (c) => ({ activity_id: idLike(c.activityId) }), auth: v1Auth },
    {
      family: "v1",
      template: "/v1/activities/{activity_id}/export",
      methods: ["GET"],
      params: (c) => ({ activity_id: idLike(c.activityId) }),
      query: () => ({ format: fc.oneof(fc.constantFrom("original", "fit", "gpx", "tcx", "", "kml"), nastyString) }),
      auth: v1Auth,
    },
    { family: "v1", template: "/v1/athletes/me/uploads", methods: ["POST"], body: jsonBody(activityBody), auth: v1Auth },
    { family: "v1", template: "/v1/uploads/{upload_id}", methods: ["GET"], params: () => ({ upload_id: idLike("upl_7hQ2mN4rT1vB8kL3pZaX9c") }), auth: v1Auth },
    { family: "v1", template: "/v1/athletes/{athlete_id}/metrics", methods: ["GET"], params: athlete, query: () => ({ start: date, end: date, type: metricType, ...listQuery }), auth: v1Auth },
    { family: "v1", template: "/v1/athletes/me/metrics", methods: ["POST"], body: jsonBody(metricBody), auth: v1Auth },
    { family: "v1", template: "/v1/teams", methods: ["GET"], query: () => listQuery, auth: v1Auth },
    { family: "v1", template: "/v1/teams/{team_id}/members", methods: ["GET"], params: (c) => ({ team_id: idLike(c.teamId) }), query: () => listQuery, auth: v1Auth },
    { family: "v1", template: "/v1/app/usage", methods: ["GET"], auth: appAuth },
    { family: "v1", template: "/v1/app/events", methods: ["GET"], query: () => ({ after: listQuery.cursor, limit: listQuery.limit }), auth: appAuth },
    { family: "v1", template: "/v1/app/webhooks", methods: ["GET", "POST"], query: () => listQuery, body: jsonBody(webhookBody), auth: appAuth },
    { family: "v1", template: "/v1/app/webhooks/{id}", methods: ["GET", "PATCH"], params: webhook, body: jsonBody(webhookBody), auth: appAuth },
    { family: "v1", template: "/v1/app/webhooks/{id}", methods: ["DELETE"], params: (c) => ({ id: idLike(c.spareWebhookId) }), auth: appAuth },
    { family: "v1", template: "/v1/app/webhooks/{id}/rotate-secret", methods: ["POST"], params: webhook, auth: appAuth },
    { family: "v1", template: "/v1/app/webhooks/{id}/send-test-event", methods: ["POST"], params: webhook, auth: appAuth },
    { family: "v1", template: "/v1/app/webhooks/{id}/deliveries", methods: ["GET"], params: webhook, query: () => ({ status: fc.constantFrom("pending", "succeeded", "failed", "", "PENDING", "all"), ...listQuery }), auth: appAuth },
    { family: "v1", template: "/v1/app/webhooks/{id}/deliveries/{delivery_id}", methods: ["GET"], params: (c) => ({ ...webhook(c), delivery_id: idLike(c.deliveryId) }), auth: appAuth },
    { family: "v1", template: "/v1/app/webhooks/{id}/deliveries/{delivery_id}/redeliver", methods: ["POST"], params: (c) => ({ ...webhook(c), delivery_id: idLike(c.deliveryId) }), auth: appAuth },
    { family: "v1", template: "/v1/openapi.json", methods: ["GET"], auth: none },
    { family: "mcp", template: "/mcp", methods: ["POST", "GET"], body: jsonBody(mcpBody), auth: v1Auth },
    { family: "v1", template: "/v1/{unknown}", methods: ["GET", "POST"], params: () => ({ unknown: fc.oneof(fc.constantFrom("activities", "athletes/me/streams", "x/y/z", "%2e%2e/oauth/token", ""), nastyString.map((s) => encodeURIComponent(latinSafe(s)))) }), auth: v1Auth },
    {
      family: "oauth",
      template: "/oauth/token",
      methods: ["POST"],
      body: formBody({
        grant_type: fc.oneof(fc.constantFrom("client_credentials", "authorization_code", "refresh_token", "password", "urn:ietf:params:oauth:grant-type:device_code", ""), nastyString),
        code: fc.oneof(fc.base64String({ maxLength: 60 }), nastyString),
        code_verifier: fc.oneof(fc.constantFrom("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "short"), nastyString),
        redirect_uri: loopbackUrl,
        refresh_token: fc.oneof(fc.constantFrom("aas_rt_", "aas_rt_" + "A".repeat(36)), nastyString),
        client_id: fc.constantFrom("faults-fuzz-app", "demo-mobile", "", "nope"),
        client_secret: nastyString,
        scope: fc.array(scope, { maxLength: 4 }).map((s) => s.join(" ")),
        resource: fc.constantFrom("http://127.0.0.1/v1", "urn:x", ""),
      }),
      auth: basicAuth,
    },
    {
      family: "oauth",
      template: "/oauth/revoke",
      methods: ["POST"],
      body: formBody({
        token: fc.oneof(fc.constantFrom("aas_rt_" + "A".repeat(36), "eyJ.x.y"), nastyString),
        token_type_hint: fc.constantFrom("refresh_token", "access_token", "id_token", ""),
        client_id: fc.constantFrom("faults-fuzz-app", "", "nope"),
      }),
      auth: basicAuth,
    },
    {
      family: "oauth",
      template: "/oauth/register",
      methods: ["POST"],
      body: jsonBody(
        objectOf({
          client_name: nastyString,
          redirect_uris: fc.array(fc.oneof(loopbackUrl, fc.constantFrom("https://assistant.example/cb", "http://example.com/cb", "javascript:alert(1)")), { maxLength: 3 }),
          token_endpoint_auth_method: fc.constantFrom("none", "client_secret_basic", "private_key_jwt", ""),
          grant_types: fc.array(fc.constantFrom("authorization_code", "refresh_token", "client_credentials", "password")),
          client_uri: fc.constantFrom("https://assistant.example/", "http://x", ""),
        }),
      ),
      auth: none,
    },
    { family: "authorize", template: "/oauth/authorize", methods: ["GET"], query: authorizeQuery, auth: (c) => fc.oneof(none(), cookieAuth(c)) },
    { family: "console", template: "/api/console/activities", methods: ["GET", "POST"], query: () => ({ start: date, end: date, ...listQuery }), body: jsonBody(activityBody), auth: cookieAuth },
    { family: "console", template: "/api/console/activities/{activity_id}", methods: ["GET", "PATCH", "DELETE"], params: (c) => ({ activity_id: idLike(c.activityId) }), body: jsonBody(activityBody), auth: cookieAuth },
    { family: "console", template: "/api/console/apps", methods: ["GET", "POST"], body: jsonBody(appBody), auth: cookieAuth },
    { family: "console", template: "/api/console/apps/{client_id}", methods: ["GET", "PATCH", "DELETE"], params: consoleApp, body: jsonBody(appBody), auth: cookieAuth },
    { family: "console", template: "/api/console/apps/{client_id}/rotate-secret", methods: ["POST"], params: consoleApp, auth: cookieAuth },
    { family: "console", template: "/api/console/apps/{client_id}/usage", methods: ["GET"], params: consoleApp, auth: cookieAuth },
    { family: "console", template: "/api/console/apps/{client_id}/webhooks", methods: ["GET", "POST"], params: consoleApp, body: jsonBody(webhookBody), auth: cookieAuth },
    { family: "console", template: "/api/console/apps/{client_id}/webhooks/{id}", methods: ["GET", "PATCH", "DELETE"], params: consoleHook, body: jsonBody(webhookBody), auth: cookieAuth },
    { family: "console", template: "/api/console/apps/{client_id}/webhooks/{id}/deliveries", methods: ["GET"], params: consoleHook, query: () => ({ status: fc.constantFrom("pending", "failed", "x"), ...listQuery }), auth: cookieAuth },
    { family: "console", template: "/api/console/apps/{client_id}/webhooks/{id}/deliveries/{delivery_id}", methods: ["GET"], params: (c) => ({ ...consoleHook(c), delivery_id: idLike(c.deliveryId) }), auth: cookieAuth },
    { family: "console", template: "/api/console/apps/{client_id}/webhooks/{id}/deliveries/{delivery_id}/redeliver", methods: ["POST"], params: (c) => ({ ...consoleHook(c), delivery_id: idLike(c.deliveryId) }), auth: cookieAuth },
    { family: "console", template: "/api/console/apps/{client_id}/webhooks/{id}/rotate-secret", methods: ["POST"], params: consoleHook, auth: cookieAuth },
    { family: "console", template: "/api/console/apps/{client_id}/webhooks/{id}/send-test-event", methods: ["POST"], params: consoleHook, auth: cookieAuth },
    { family: "console", template: "/api/console/connected-apps", methods: ["GET"], auth: cookieAuth },
    { family: "console", template: "/api/console/connected-apps/{grant_id}", methods: ["DELETE"], params: (c) => ({ grant_id: idLike(c.consoleGrantId) }), auth: cookieAuth },
    { family: "console", template: "/api/console/invitations/{team_id}", methods: ["POST", "DELETE"], params: (c) => ({ team_id: idLike(c.teamId) }), auth: cookieAuth },
    { family: "console", template: "/api/console/memberships", methods: ["GET"], auth: cookieAuth },
    { family: "console", template: "/api/console/profile", methods: ["GET", "PATCH"], body: jsonBody(profileBody), auth: cookieAuth },
    { family: "console", template: "/api/console/teams", methods: ["GET", "POST"], body: jsonBody(teamBody), auth: cookieAuth },
    { family: "console", template: "/api/console/teams/{team_id}/invitations", methods: ["POST"], params: (c) => ({ team_id: idLike(c.teamId) }), body: jsonBody(invitationBody), auth: cookieAuth },
    { family: "console", template: "/api/console/tokens", methods: ["GET", "POST"], body: jsonBody(tokenBody), auth: cookieAuth },
    { family: "console", template: "/api/console/tokens/{token_id}", methods: ["DELETE"], params: (c) => ({ token_id: idLike(c.consoleTokenId) }), auth: cookieAuth },
  ];
}

// ---- whole requests -------------------------------------------------------------------------

/** Headers that make no sense, or too much of it, added now and then. */
const extraHeaders = fc.oneof(
  { weight: 10, arbitrary: fc.constant<[string, string][]>([]) },
  fc.constantFrom<[string, string][]>(
    [["X-Forwarded-For", "1.2.3.4, ".repeat(1500) + "5.6.7.8"]],
    [["X-Forwarded-For", "not an address"]],
    [["Idempotency-Key", "k".repeat(10_000)]],
    [["Idempotency-Key", ""]],
    [["Idempotency-Key", "\xff\xfe\xfd"]],
    [["Accept", "application/xml"]],
    [["Accept-Encoding", "gzip;q=1e999, br;q=-1"]],
    [["Content-Encoding", "gzip"]],
    [["X-Huge", "h".repeat(15_000)]],
    [["X-Bad-Bytes", "caf\xe9 \x80\x81"]],
    [["X-Control", "a\x01b"]],
    [["Transfer-Encoding", "chunked, identity"]],
    [["Range", "bytes=0-1,2-3"]],
    [["Expect", "100-continue"]],
  ),
  fc.tuple(fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 20 }), headerValue).map(([n, v]): [string, string][] => [[`X-${n.replace(/[^A-Za-z0-9-]/g, "") || "F"}`, v]]),
  fc.tuple(fc.integer({ min: 80, max: 400 })).map(([n]) => Array.from({ length: n }, (_, i): [string, string] => [`X-Many-${i}`, "v"])),
);

/** The request target: the route's path with its parameters, and a query of its parameters. */
function target(template: string, params: Record<string, string>, query: [string, string][], rawQuery: string | undefined): string {
  const path = template.replace(/\{(\w+)\}/g, (_, k: string) => params[k] ?? "x");
  const q = rawQuery ?? query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
  return q ? `${path}?${q}` : path;
}

const rawQueries = fc.constantFrom("a=%ZZ", "start=%FF%FE", "limit=1&limit=2", "cursor=%00", "start=2026-01-01&start=2026-02-01", "=&&=", "x=" + "y".repeat(9_000), "%E2%80");

/** One hostile request against `ctx`'s service. */
export function hostileRequest(ctx: HostileContext, families: Family[] = ["v1", "oauth", "authorize", "console"]): fc.Arbitrary<HostileRequest> {
  const rs = routes().filter((r) => families.includes(r.family));
  return fc.oneof(
    ...rs.map((r) => {
      const params = r.params ? fc.record(r.params(ctx)) : fc.constant({} as Record<string, string>);
      const queryArbs = r.query?.(ctx) ?? {};
      const query = fc.tuple(...Object.entries(queryArbs).map(([k, a]) => fc.option(a.map((v) => [k, latinSafe(v)] as [string, string]), { freq: 2, nil: undefined })));
      const method = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...r.methods) }, fc.constantFrom(...METHODS), fc.constantFrom("TRACE", "CONNECT", "PROPFIND", "get"));
      return fc
        .tuple(method, params, query, fc.option(rawQueries, { freq: 10, nil: undefined }), r.auth(ctx), extraHeaders, r.body ?? noBody, fc.option(fc.constant(true), { freq: 60, nil: undefined }))
        .map(([m, p, q, rawQuery, auth, extra, plan, truncated]): HostileRequest => {
          const sendsBody = plan.body.kind !== "none" && !["GET", "HEAD", "OPTIONS", "DELETE"].includes(m);
          const headers: [string, string][] = [...auth, ...extra];
          if (sendsBody && plan.contentType !== undefined) headers.push(["Content-Type", plan.contentType]);
          return {
            family: r.family,
            route: r.template,
            method: m,
            target: target(r.template, p, q.filter((x): x is [string, string] => x !== undefined), rawQuery),
            headers,
            body: sendsBody ? plan.body : { kind: "none" },
            truncatedTransport: sendsBody && truncated === true && plan.body.kind === "bytes" && plan.body.bytes.length > 1,
            notes: [...(sendsBody ? plan.notes : []), ...(rawQuery ? [`query: ${rawQuery.slice(0, 40)}`] : []), ...(extra.length ? [`headers: ${extra.map(([n]) => n).slice(0, 3).join(", ")}`] : [])],
          };
        });
    }),
  );
}

/** Query values go through encodeURIComponent, which throws on lone surrogates. */
function latinSafe(s: string): string {
  return s.replace(/[\ud800-\udfff]/g, "\ufffd");
}

/** The bytes of `r` as sent to `host`. */
export function serialize(r: HostileRequest, host: string): Buffer {
  const body = r.body.kind === "none" ? Buffer.alloc(0) : r.body.kind === "bytes" ? Buffer.from(r.body.bytes, "latin1") : Buffer.alloc(r.body.bytes, 0x61);
  const lines = [`${r.method} ${r.target} HTTP/1.1`, `Host: ${host}`, "Connection: close"];
  const chunked = r.headers.some(([n, v]) => n.toLowerCase() === "transfer-encoding" && /chunked/i.test(v));
  for (const [n, v] of r.headers) lines.push(`${n}: ${v}`);
  if (r.body.kind !== "none" && !chunked) lines.push(`Content-Length: ${body.length}`);
  let payload = body;
  if (chunked && body.length) payload = Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from("\r\n0\r\n\r\n")]);
  const sent = r.truncatedTransport ? payload.subarray(0, Math.floor(payload.length / 2)) : payload;
  return Buffer.concat([Buffer.from(lines.join("\r\n") + "\r\n\r\n", "latin1"), sent]);
}

/** A way to send `r` again from a shell, for a report. */
export function reproduction(r: HostileRequest, host: string): string {
  const bytes = serialize(r, host);
  if (bytes.length > 6_000) {
    return `${r.method} ${r.target.slice(0, 200)} (${bytes.length} bytes; first 300: ${JSON.stringify(bytes.subarray(0, 300).toString("latin1"))})`;
  }
  return `node -e 'const s=require("net").connect(PORT,"127.0.0.1");s.end(Buffer.from("${bytes.toString("base64")}","base64"));s.pipe(process.stdout)'`;
}

// ---- judgement ------------------------------------------------------------------------------

export type Verdict =
  | { ok: true; kind: string }
  | { ok: false; rule: string; detail: string };

/**
 * The family whose rules an answer follows: that of the path the target resolves to, since
 * dot segments can lead out of the route it was generated from (/v1/%2e%2e/oauth/token is
 * /oauth/token); "other" for a path outside every family, where only the absence of a 5xx is
 * asked.
 */
export function familyOf(target: string): Family | "other" {
  let path: string;
  try {
    path = new URL(target, "http://host").pathname;
  } catch {
    return "other";
  }
  if (path === "/v1" || path.startsWith("/v1/")) return "v1";
  if (path === "/mcp") return "mcp";
  if (path === "/oauth/token" || path === "/oauth/revoke" || path === "/oauth/register") return "oauth";
  if (path === "/oauth/authorize") return "authorize";
  if (path.startsWith("/api/console/")) return "console";
  return "other";
}

export function judge(r: HostileRequest, a: RawAnswer): Verdict {
  const family = familyOf(r.target);
  if (!a.answered) {
    // A client that stopped mid-body, or sent over a megabyte that the service refused while
    // it was still sending, may be cut off; anything else must be answered.
    if (a.error === "closed without an answer" && (r.truncatedTransport || r.body.kind === "oversize")) return { ok: true, kind: "closed (client stopped or oversize)" };
    return { ok: false, rule: "answered", detail: `${a.error} ${a.detail}`.trim() };
  }
  if (a.status >= 500) return { ok: false, rule: "no 5xx", detail: `HTTP ${a.status}: ${a.body.subarray(0, 300).toString("utf8")}` };
  if (a.status < 400) return { ok: true, kind: `${Math.floor(a.status / 100)}xx` };
  const contentType = (a.headers["content-type"] ?? "").split(";")[0]!.trim();
  if (r.method === "HEAD") {
    // No body to judge: the headers say what the GET's answer would be.
    if (family === "other") return { ok: true, kind: `${a.status} outside the families (HEAD)` };
    const want = family === "oauth" ? "application/json" : family === "authorize" ? "text/html" : "application/problem+json";
    return contentType === want ? { ok: true, kind: `${a.status} (HEAD)` } : { ok: false, rule: "error shape (HEAD)", detail: `HTTP ${a.status} ${contentType}` };
  }
  let body: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(a.body.toString("utf8"));
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    // judged below
  }
  if (family === "other") return { ok: true, kind: `${a.status} outside the families` };
  if (family === "oauth") {
    if (contentType !== "application/json" || typeof body?.error !== "string") {
      return { ok: false, rule: "OAuth error shape", detail: `HTTP ${a.status} ${contentType}: ${a.body.subarray(0, 200).toString("utf8")}` };
    }
    if (!OAUTH_ERRORS.has(body.error)) return { ok: false, rule: "OAuth error code", detail: `HTTP ${a.status} error "${body.error}"` };
    // RFC 6749 §5.2: a client that authenticated with the Authorization header is challenged;
    // one that did not is not (a browser would show its own password prompt over the caller).
    const sentAuthorization = r.headers.some(([name]) => name.toLowerCase() === "authorization");
    if (a.status === 401 && sentAuthorization && !a.headers["www-authenticate"]) return { ok: false, rule: "401 with WWW-Authenticate", detail: `error ${body.error}` };
    if (a.status === 401 && !sentAuthorization && a.headers["www-authenticate"]) return { ok: false, rule: "no challenge without Authorization", detail: `error ${body.error}` };
    return { ok: true, kind: `${a.status} ${body.error}` };
  }
  if (family === "mcp" && contentType === "application/json" && body?.jsonrpc === "2.0") {
    // The SDK's transport refuses what is not MCP (not JSON-RPC, a wrong Accept) in JSON-RPC's own shape.
    const error = body.error as { code?: unknown; message?: unknown } | undefined;
    return typeof error?.code === "number" && typeof error.message === "string"
      ? { ok: true, kind: `${a.status} JSON-RPC ${error.code}` }
      : { ok: false, rule: "JSON-RPC error", detail: JSON.stringify(body).slice(0, 300) };
  }
  if (family === "authorize") {
    // The authorization page answers people: a page, or a redirect carrying the error.
    return contentType === "text/html" ? { ok: true, kind: `${a.status} page` } : { ok: false, rule: "authorize error page", detail: `HTTP ${a.status} ${contentType}` };
  }
  if (contentType !== "application/problem+json" || !body) {
    return { ok: false, rule: "problem document", detail: `HTTP ${a.status} ${contentType || "(no content-type)"}: ${a.body.subarray(0, 200).toString("utf8")}` };
  }
  const code = String(body.code);
  const known = CONTRACT_CODES[code];
  if (known === undefined) return { ok: false, rule: "code from CONTRACT §3", detail: `HTTP ${a.status} code "${code}"` };
  if (known !== a.status || body.status !== a.status) return { ok: false, rule: "status matches code", detail: `HTTP ${a.status}, member status ${String(body.status)}, code ${code} (CONTRACT: ${known})` };
  if (typeof body.type !== "string" || !body.type.endsWith(`/problems/${code}`) || typeof body.title !== "string" || typeof body.detail !== "string") {
    return { ok: false, rule: "problem members", detail: JSON.stringify(body).slice(0, 300) };
  }
  if (a.status === 401 && (family === "v1" || family === "mcp") && !a.headers["www-authenticate"]) return { ok: false, rule: "401 with WWW-Authenticate", detail: code };
  if (a.status === 405 && !a.headers.allow) return { ok: false, rule: "405 with Allow", detail: code };
  if (a.status === 429 && !a.headers["retry-after"]) return { ok: false, rule: "429 with Retry-After", detail: code };
  return { ok: true, kind: `${a.status} ${code}` };
}
