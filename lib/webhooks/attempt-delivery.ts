import "server-only";
import type { Db } from "../db/client";
import { unseal } from "../crypto/seal";
import type { ClaimedDelivery } from "./claim-deliveries";
import { sendOutbound, type NotSentReason, type OutboundResult } from "./outbound";
import { serializePayload } from "./payload";
import { recordAttempt, type Attempt, type AttemptRecorded } from "./record-attempt";
import { DELIVERY_ID_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from "./signature";

export const DELIVERY_TIMEOUT_MS = 10_000;

export type DeliveryOptions = {
  allowPrivate: boolean;
  schedule?: readonly number[];
  timeoutMs?: number;
};

/**
 * The request for one attempt (SPEC §6.3, CONTRACT §7): the body serialised once, signed
 * with the current secret and, for 24 hours after a rotation, the previous one too.
 */
export function buildDeliveryRequest(d: ClaimedDelivery, now: Date = new Date()): { headers: Record<string, string>; body: string } {
  if (!d.event) throw new Error(`delivery ${d.id}: its event is gone`);
  const body = serializePayload(d.event);
  const secrets = [unseal(d.secretSealed)];
  if (d.previousSecretSealed && d.previousSecretExpiresAt && d.previousSecretExpiresAt > now) secrets.push(unseal(d.previousSecretSealed));
  const t = Math.floor(now.getTime() / 1000);
  return {
    headers: {
      "Content-Type": "application/json",
      [SIGNATURE_HEADER]: signatureHeader(secrets, t, body),
      [EVENT_ID_HEADER]: d.event.id,
      [DELIVERY_ID_HEADER]: d.id,
      "User-Agent": "AthleteActivityService-Webhooks/1",
    },
    body,
  };
}

/** An attempt sent (or not sent), ready to be recorded. */
export type SentAttempt = {
  delivery: ClaimedDelivery;
  startedAt: Date;
  request: { headers: Record<string, string>; body: string };
  result: OutboundResult;
};

/** Signs and POSTs one claimed delivery (10 s, no redirects, 4 KiB read); records nothing. */
export async function sendAttempt(d: ClaimedDelivery, opts: DeliveryOptions): Promise<SentAttempt> {
  const startedAt = new Date();
  let request: { headers: Record<string, string>; body: string } | undefined;
  let result: OutboundResult;
  try {
    request = buildDeliveryRequest(d, startedAt);
    result = await sendOutbound({
      url: d.url,
      method: "POST",
      headers: request.headers,
      body: request.body,
      allowPrivate: opts.allowPrivate,
      timeoutMs: opts.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    });
  } catch (err) {
    // Nothing could be sent (the event is gone, a secret cannot be unsealed): a failed attempt.
    result = { outcome: "not_sent", error: "network", detail: String(err), durationMs: Date.now() - startedAt.getTime() };
  }
  // The log shows the request only where one went out: never for an address refused, a name
  // that did not resolve, a connection refused or a TLS handshake that failed before it.
  const sent = request && !(result.outcome === "not_sent" && NEVER_SENT.has(result.error));
  return { delivery: d, startedAt, request: sent ? request! : { headers: {}, body: "" }, result };
}

/** Failures that end an attempt before a byte of its request is written. */
const NEVER_SENT: ReadonlySet<NotSentReason> = new Set(["blocked_address", "invalid_url", "dns", "connection_refused", "tls"]);

/**
 * What `recordAttempt` takes for a sent attempt. A crash between the send and the record leaves
 * the claim to lapse and the delivery to be sent again with the same event id: delivery is at
 * least once.
 */
export function attemptRecord(s: SentAttempt, opts: Pick<DeliveryOptions, "schedule">): Attempt {
  return {
    deliveryId: s.delivery.id,
    subscriptionId: s.delivery.subscriptionId,
    startedAt: s.startedAt,
    requestHeaders: s.request.headers,
    requestBody: s.request.body,
    result: s.result,
    probe: s.delivery.probe,
    schedule: opts.schedule,
  };
}

/** One attempt of a claimed delivery, as both runners make it: sign, POST, record. */
export async function attemptDelivery(db: Db, d: ClaimedDelivery, opts: DeliveryOptions): Promise<AttemptRecorded | null> {
  return recordAttempt(db, attemptRecord(await sendAttempt(d, opts), opts));
}
