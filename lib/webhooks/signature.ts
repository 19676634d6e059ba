import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "Service-Signature";
/** The delivery's other headers of CONTRACT §7: the event's id (the same on every retry) and the delivery's. */
export const EVENT_ID_HEADER = "Service-Event-Id";
export const DELIVERY_ID_HEADER = "Service-Delivery-Id";
export const SIGNATURE_TOLERANCE_S = 300;

/** Lowercase hex HMAC-SHA256 of `<t>.<raw body>` (SPEC §6.3). */
export function computeSignature(secret: string, timestamp: number, body: string | Uint8Array): string {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex");
}

/** `t=<unix>,v1=<hex>[,v1=<hex>]`: one v1 per live secret, so a rotation breaks no receiver. */
export function signatureHeader(secrets: readonly string[], timestamp: number, body: string | Uint8Array): string {
  return [`t=${timestamp}`, ...secrets.map((s) => `v1=${computeSignature(s, timestamp, body)}`)].join(",");
}

export type VerifyResult = { ok: true; timestamp: number } | { ok: false; reason: "malformed" | "timestamp_out_of_tolerance" | "no_matching_signature" };

/**
 * For receivers: checks a delivery's `Service-Signature` against the exact bytes received,
 * comparing in constant time and refusing timestamps more than 300 s away.
 * @see SPEC §6.3; the same `t=…,v1=…` scheme as Stripe's
 */
export function verifyWebhookSignature(
  rawBody: string | Uint8Array,
  header: string | null | undefined,
  secret: string | readonly string[],
  opts: { toleranceS?: number; nowS?: number } = {},
): VerifyResult {
  if (!header) return { ok: false, reason: "malformed" };
  let timestamp: number | undefined;
  const candidates: string[] = [];
  for (const part of header.split(",")) {
    const [k, v] = part.trim().split("=", 2);
    if (k === "t" && v && /^\d+$/.test(v)) timestamp = Number(v);
    else if (k === "v1" && v && /^[0-9a-f]{64}$/.test(v)) candidates.push(v);
  }
  if (timestamp === undefined || !candidates.length) return { ok: false, reason: "malformed" };
  const now = opts.nowS ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (opts.toleranceS ?? SIGNATURE_TOLERANCE_S)) return { ok: false, reason: "timestamp_out_of_tolerance" };
  for (const s of typeof secret === "string" ? [secret] : secret) {
    const expected = Buffer.from(computeSignature(s, timestamp, rawBody), "hex");
    for (const c of candidates) {
      if (timingSafeEqual(expected, Buffer.from(c, "hex"))) return { ok: true, timestamp };
    }
  }
  return { ok: false, reason: "no_matching_signature" };
}
