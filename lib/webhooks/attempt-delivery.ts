import "server-only";
import type { Db } from "../db/client";
import { unseal } from "../crypto/seal";
import type { ClaimedDelivery } from "./claim-deliveries";
import { sendOutbound, type OutboundResult } from "./outbound";
import { serializePayload } from "./payload";
import { recordAttempt, type AttemptRecorded } from "./record-attempt";
import { SIGNATURE_HEADER, signatureHeader } from "./signature";

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
      "Service-Event-Id": d.event.id,
      "Service-Delivery-Id": d.id,
      "User-Agent": "AthleteActivityService-Webhooks/1",
    },
    body,
  };
}

/**
 * One attempt of a claimed delivery: sign, POST (10 s, no redirects, 4 KiB read) and record.
 * A crash between the send and the record leaves the claim to lapse and the delivery to be
 * sent again with the same event id: delivery is at least once.
 */
export async function attemptDelivery(db: Db, d: ClaimedDelivery, opts: DeliveryOptions): Promise<AttemptRecorded | null> {
  const startedAt = new Date();
  let request: { headers: Record<string, string>; body: string };
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
    request ??= { headers: {}, body: "" };
    result = { outcome: "not_sent", error: "network", detail: String(err), durationMs: Date.now() - startedAt.getTime() };
  }
  return recordAttempt(db, {
    deliveryId: d.id,
    subscriptionId: d.subscriptionId,
    startedAt,
    requestHeaders: request.headers,
    requestBody: request.body,
    result,
    schedule: opts.schedule,
  });
}
