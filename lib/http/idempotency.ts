import "server-only";
import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import { rowsAs, selectAs, type Db } from "../db/client";
import { idempotencyKeys } from "../db/schema";
import { sha256Hex } from "../crypto/random";
import { seal, unseal } from "../crypto/seal";
import { ApiError } from "./errors";
import { IdempotencyKey } from "./schemas";

const TTL_MS = 24 * 60 * 60 * 1000;

/**
 * A stored answer at rest: sealed, as webhook secrets are, because an answer may carry a secret
 * shown once (a subscription's `whsec_…`). Every answer is sealed, so none can be forgotten.
 */
type StoredBody = { sealed: string };

function sealAnswer(body: unknown): StoredBody {
  return { sealed: seal(JSON.stringify(body)) };
}

function openAnswer(stored: unknown): unknown {
  const sealed = (stored as Partial<StoredBody> | null)?.sealed;
  // Answers stored before sealing are plain; they expire within 24 hours of the upgrade.
  if (typeof sealed !== "string" || Object.keys(stored as object).length !== 1) return stored;
  return JSON.parse(unseal(sealed)) as unknown;
}

export type IdempotencyClaim =
  | { kind: "new"; principal: string; key: string; requestHash: string }
  | { kind: "replay"; status: number; body: unknown };

/** The advisory lock that stands for one (principal, key): 64 bits of its SHA-256. */
function lockId(principal: string, key: string): string {
  return BigInt.asIntN(64, BigInt(`0x${sha256Hex(`${principal}\u0000${key}`).slice(0, 16)}`)).toString();
}

/**
 * Stripe's Idempotency-Key semantics: the first request with a key runs and its answer is
 * stored for 24 hours; a repeat with the same body gets the stored answer, a repeat with a
 * different body 422, and a repeat while the first still runs 409.
 *
 * Call it inside the write's transaction. The key is held by a transaction-scoped advisory
 * lock and its answer is stored by that same transaction, so whatever ends the transaction
 * without committing (an error, a lost connection, a crashed instance) frees the key too:
 * no key is ever left claimed by a request that will not finish.
 */
/** 400 unless `key` is 1 to 255 visible ASCII characters. */
export function assertIdempotencyKeyForm(key: string): void {
  if (!IdempotencyKey.safeParse(key).success) {
    throw new ApiError("invalid_request", "Idempotency-Key must be 1 to 255 visible ASCII characters.", {
      errors: [{ field: "Idempotency-Key", code: "invalid_request", detail: "1 to 255 visible ASCII characters" }],
    });
  }
}

export async function claimIdempotencyKey(
  tx: Db,
  principal: string,
  key: string,
  requestFingerprint: string,
): Promise<IdempotencyClaim> {
  assertIdempotencyKeyForm(key);
  const requestHash = sha256Hex(requestFingerprint);
  // Computed: no column of the schema, so its type is written beside it.
  const taken = { locked: sql<boolean>`pg_try_advisory_xact_lock(${lockId(principal, key)}::bigint)` };
  const [lock] = rowsAs(taken, await tx.execute(sql`select ${selectAs(taken)}`));
  if (!lock?.locked) {
    throw new ApiError("idempotency_key_in_use", "A request with this Idempotency-Key is still in progress.", {
      headers: { "Retry-After": "1" },
    });
  }
  const mine = and(eq(idempotencyKeys.principal, principal), eq(idempotencyKeys.key, key));
  // Expired answers go; so does a row without an answer, which only a request from before
  // keys were claimed in the write's transaction could have left.
  await tx
    .delete(idempotencyKeys)
    .where(and(mine, or(lt(idempotencyKeys.createdAt, new Date(Date.now() - TTL_MS)), isNull(idempotencyKeys.responseStatus))));
  const [row] = await tx.select().from(idempotencyKeys).where(mine);
  if (!row) return { kind: "new", principal, key, requestHash };
  if (row.requestHash !== requestHash) {
    throw new ApiError("idempotency_key_reused", "This Idempotency-Key was used with a different request.");
  }
  return { kind: "replay", status: row.responseStatus!, body: openAnswer(row.responseBody) };
}

/** Stores the answer, in the transaction that claimed the key, so it commits with the write. */
export async function completeIdempotencyKey(
  tx: Db,
  claim: Extract<IdempotencyClaim, { kind: "new" }>,
  status: number,
  body: unknown,
): Promise<void> {
  await tx.insert(idempotencyKeys).values({
    principal: claim.principal,
    key: claim.key,
    requestHash: claim.requestHash,
    responseStatus: status,
    responseBody: sealAnswer(body),
  });
}

/**
 * A stored answer for this key, read without claiming it: lets a route answer a retry before
 * doing slow work outside its transaction (a webhook handshake) a second time. The claim in
 * the transaction still decides.
 */
export async function findStoredAnswer(
  db: Db,
  principal: string,
  key: string,
  requestFingerprint: string,
): Promise<Extract<IdempotencyClaim, { kind: "replay" }> | undefined> {
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.principal, principal), eq(idempotencyKeys.key, key)));
  if (!row || row.responseStatus === null || row.createdAt.getTime() < Date.now() - TTL_MS) return undefined;
  if (row.requestHash !== sha256Hex(requestFingerprint)) {
    throw new ApiError("idempotency_key_reused", "This Idempotency-Key was used with a different request.");
  }
  return { kind: "replay", status: row.responseStatus, body: openAnswer(row.responseBody) };
}

/** Drops keys past their 24 hours (CONTRACT §5); the hourly housekeeping calls it. */
export async function pruneIdempotencyKeys(db: Db, nowMs = Date.now()): Promise<void> {
  await db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, new Date(nowMs - TTL_MS)));
}
