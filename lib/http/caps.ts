import { count, type SQL } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import type { Db } from "../db/client";
import { ApiError } from "./errors";

/**
 * How many of each thing one owner may hold at once. Far above what a person uses, so that only
 * a flood meets them: the rate limits bound how fast things are made, these how many pile up
 * (every list of them is read whole, by the console and the API).
 */
export const CAPS = {
  /** Webhook subscriptions per app (Stripe allows 16 endpoints). */
  subscriptionsPerApp: 20,
  /** Personal access tokens in force (not revoked, not expired) per person. */
  activeTokensPerPerson: 100,
  /** Apps per developer. */
  appsPerPerson: 50,
  /** Teams a person coaches or administers (created, or joined as a coach). */
  coachedTeamsPerPerson: 100,
  /** Invitations a team has sent and nobody has answered yet (members who accepted do not count). */
  pendingInvitationsPerTeam: 200,
} as const;

/**
 * 409 `conflict`, saying `detail`, when `cap` rows of `table` match `where` already: the write
 * that would add one more is refused and nothing changes. Counted in the write's transaction; two
 * creates at the same instant may pass the cap by one, which is harmless (the bound is about floods).
 */
export async function assertRoom(db: Db, { table, where, cap, detail }: { table: PgTable; where: SQL | undefined; cap: number; detail: string }): Promise<void> {
  const [row] = await db.select({ n: count() }).from(table).where(where);
  if (Number(row?.n ?? 0) >= cap) throw new ApiError("conflict", detail);
}
