import "server-only";
import { printableExcerpt as printable } from "../text";
import { randomBase62 } from "../crypto/random";
import { ApiError } from "../http/errors";
import { RESPONSE_EXCERPT_BYTES, sendOutbound } from "./outbound";
import type { HandshakeReport } from "./subscriptions/schemas";

export type { HandshakeReport };

/** CONTRACT §7: the subscriber has 5 seconds to answer the handshake. */
export const HANDSHAKE_TIMEOUT_MS = 5_000;

/**
 * How much of the endpoint's answer a handshake report shows, in `body_excerpt` and quoted in
 * the problem's `detail`: enough to see what a receiver said ("no such route", a framework's
 * error page title), too little to read another service out through it, should a URL reach
 * one (CONTRACT §1: private networks are allowed only for a demo on this machine).
 */
export const HANDSHAKE_EXCERPT_CHARS = 200;

/** At most `max` (200) printable characters of an endpoint's answer (lib/text.ts). */
export function printableExcerpt(body: string, max = HANDSHAKE_EXCERPT_CHARS): string {
  return printable(body, max);
}

/** The handshake's URL: the subscription URL with the three `hub.*` parameters appended to its query. */
export function handshakeUrl(url: string, challenge: string, verifyToken: string): string {
  const u = new URL(url);
  const hub = new URLSearchParams({ "hub.mode": "subscribe", "hub.challenge": challenge, "hub.verify_token": verifyToken });
  u.search = u.search ? `${u.search}&${hub.toString()}` : `?${hub.toString()}`;
  return u.toString();
}

/** Any JSON body whose `hub.challenge` member is exactly the challenge sent. */
function echoesChallenge(body: string, challenge: string): boolean | "not_json" {
  let parsed: unknown;
  try {
    // A byte order mark before the JSON is how some frameworks write UTF-8; JSON.parse refuses it.
    parsed = JSON.parse(body.replace(/^\uFEFF/, ""));
  } catch {
    return "not_json";
  }
  return typeof parsed === "object" && parsed !== null && (parsed as Record<string, unknown>)["hub.challenge"] === challenge;
}

/**
 * The verification handshake (SPEC §4.4, CONTRACT §7): `GET url?hub.mode=subscribe&
 * hub.challenge=…&hub.verify_token=…`, complete only on a 200 whose JSON body holds
 * `hub.challenge` equal to the challenge. Sent through `sendOutbound`, so the address is
 * checked when the connection is made, redirects are not followed and at most 4 KiB is read.
 */
export async function runHandshake(
  url: string,
  opts: { verifyToken: string; allowPrivate: boolean; timeoutMs?: number; challenge?: string },
): Promise<HandshakeReport> {
  const challenge = opts.challenge ?? randomBase62(32);
  let target: string;
  try {
    target = handshakeUrl(url, challenge, opts.verifyToken);
  } catch {
    return { outcome: "not_sent", status: null, content_type: null, body_excerpt: null, error: "invalid_url", duration_ms: 0 };
  }
  const res = await sendOutbound({
    url: target,
    method: "GET",
    headers: { accept: "application/json", "user-agent": "AthleteActivityService-Webhooks/1.0" },
    allowPrivate: opts.allowPrivate,
    timeoutMs: opts.timeoutMs ?? HANDSHAKE_TIMEOUT_MS,
  });
  if (res.outcome === "not_sent") {
    return { outcome: "not_sent", status: null, content_type: null, body_excerpt: null, error: res.error, duration_ms: res.durationMs };
  }
  // The whole answer read (4 KiB at most) is checked for the challenge; only a short,
  // printable start of it is reported.
  const answered = {
    status: res.status,
    content_type: res.contentType,
    body_excerpt: printableExcerpt(res.bodyExcerpt),
    error: res.bodyError,
    duration_ms: res.durationMs,
  };
  if (res.status !== 200) return { outcome: "unexpected_status", ...answered };
  // The challenge is in the body: a 200 whose body stopped before its end is no answer to check.
  if (res.bodyError !== null) return { outcome: "body_incomplete", ...answered };
  const echo = echoesChallenge(res.bodyExcerpt, challenge);
  if (echo === "not_json") return { outcome: "not_json", ...answered };
  return { outcome: echo ? "verified" : "wrong_challenge", ...answered };
}

const NOT_SENT_PROSE: Record<string, string> = {
  timeout: "it did not answer in time",
  connection_refused: "the connection was refused",
  connection_reset: "the connection was closed before an answer",
  blocked_address: "its address is not a public one, and private networks are not allowed",
  dns: "its host name could not be resolved",
  tls: "the TLS handshake failed",
  invalid_url: "the URL could not be used",
  invalid_response: "what came back could not be read as its answer (not HTTP, headers over 16 KiB, or a 100 Continue or 101 that was not asked for)",
};

/** The report's excerpt (already short and printable) quoted, and its media type when named. */
function quote(r: HandshakeReport): string {
  // Typographic quotes, which read as quotes in the console's notice as in the API's detail
  // (backticks are Markdown's, and a notice showed them as written).
  const text = printableExcerpt(r.body_excerpt ?? "").replaceAll("\u201d", '"');
  const body = text ? `\u201c${text}\u201d` : "an empty body";
  return r.content_type ? `${body} (${r.content_type})` : body;
}

/** What the endpoint did, in a sentence for the problem's `detail`. */
export function describeHandshake(r: HandshakeReport, timeoutMs = HANDSHAKE_TIMEOUT_MS): string {
  switch (r.outcome) {
    case "verified":
      return `The endpoint answered 200 with the challenge in ${r.duration_ms} ms.`;
    case "not_sent": {
      const why = r.error === "timeout" ? `it did not answer within ${timeoutMs / 1000} s` : (NOT_SENT_PROSE[r.error ?? ""] ?? `network error (${r.error})`);
      return `The handshake got no answer: ${why}.`;
    }
    case "unexpected_status":
      return `The endpoint answered ${r.status} instead of 200, with ${quote(r)}.`;
    case "not_json":
      return `The endpoint answered 200 but its body is not JSON of at most ${RESPONSE_EXCERPT_BYTES / 1024} KiB: ${quote(r)}. Answer {"hub.challenge": "<the challenge received>"}.`;
    case "body_incomplete":
      return `The endpoint answered 200, but its body stopped before its end (${r.error === "timeout" ? `it did not finish within ${timeoutMs / 1000} s` : (NOT_SENT_PROSE[r.error ?? ""] ?? r.error)}), after ${quote(r)}.`;
    case "wrong_challenge":
      return `The endpoint answered 200 with ${quote(r)}, whose "hub.challenge" is not the challenge sent. Echo the hub.challenge query parameter.`;
  }
}

/** 400 `webhook_verification_failed`, with what the endpoint did in `detail` and in the `handshake` member. */
export function handshakeFailed(r: HandshakeReport, timeoutMs = HANDSHAKE_TIMEOUT_MS): ApiError {
  return new ApiError("webhook_verification_failed", `The verification handshake did not complete. ${describeHandshake(r, timeoutMs)}`, {
    extensions: { handshake: r },
  });
}

/** Runs the handshake and throws `handshakeFailed` unless it completes. */
export async function verifyEndpoint(
  url: string,
  opts: { verifyToken?: string; allowPrivate: boolean; timeoutMs?: number },
): Promise<HandshakeReport> {
  const report = await runHandshake(url, { ...opts, verifyToken: opts.verifyToken ?? randomBase62(24) });
  if (report.outcome !== "verified") throw handshakeFailed(report, opts.timeoutMs);
  return report;
}
