import "server-only";
import { and, eq, lt } from "drizzle-orm";
import type { Db } from "../db/client";
import { idempotencyKeys } from "../db/schema";
import { sha256Hex } from "../crypto/random";
import { ApiError } from "./errors";

const TTL_MS = 24 * 60 * 60 * 1000;

export type IdempotencyClaim =
  | { kind: "new"; principal: string; key: string }
  | { kind: "replay"; status: number; body: unknown };

/**
 * Stripe's Idempotency-Key semantics: the first request with a key runs and its answer is
 * stored for 24 hours; a repeat with the same body gets the stored answer, a repeat with a
 * different body 422, and a repeat while the first still runs 409.
 */
export async function claimIdempotencyKey(
  db: Db,
  principal: string,
  key: string,
  requestFingerprint: string,
): Promise<IdempotencyClaim> {
  if (key.length < 1 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
    throw new ApiError("invalid_request", "Idempotency-Key must be 1 to 255 visible ASCII characters.", {
      errors: [{ field: "Idempotency-Key", code: "invalid_request", detail: "1 to 255 visible ASCII characters" }],
    });
  }
  const hash = sha256Hex(requestFingerprint);
  await db
    .delete(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.principal, principal),
        eq(idempotencyKeys.key, key),
        lt(idempotencyKeys.createdAt, new Date(Date.now() - TTL_MS)),
      ),
    );
  const inserted = await db
    .insert(idempotencyKeys)
    .values({ principal, key, requestHash: hash })
    .onConflictDoNothing()
    .returning({ key: idempotencyKeys.key });
  if (inserted.length) return { kind: "new", principal, key };

  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.principal, principal), eq(idempotencyKeys.key, key)));
  if (!row) return claimIdempotencyKey(db, principal, key, requestFingerprint);
  if (row.requestHash !== hash) {
    throw new ApiError("idempotency_key_reused", "This Idempotency-Key was used with a different request.");
  }
  if (row.responseStatus === null) {
    throw new ApiError("idempotency_key_in_use", "A request with this Idempotency-Key is still in progress.", {
      headers: { "Retry-After": "1" },
    });
  }
  return { kind: "replay", status: row.responseStatus, body: row.responseBody };
}

/** Stores the answer; called inside the request's transaction so it commits with the write. */
export async function completeIdempotencyKey(
  db: Db,
  claim: Extract<IdempotencyClaim, { kind: "new" }>,
  status: number,
  body: unknown,
): Promise<void> {
  await db
    .update(idempotencyKeys)
    .set({ responseStatus: status, responseBody: body })
    .where(and(eq(idempotencyKeys.principal, claim.principal), eq(idempotencyKeys.key, claim.key)));
}

/** Frees the key after a failure that wrote nothing, so the client may retry with it. */
export async function releaseIdempotencyKey(db: Db, claim: Extract<IdempotencyClaim, { kind: "new" }>) {
  await db
    .delete(idempotencyKeys)
    .where(and(eq(idempotencyKeys.principal, claim.principal), eq(idempotencyKeys.key, claim.key)));
}
