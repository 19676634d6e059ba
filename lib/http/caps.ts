import { count, getTableName, sql, type SQL } from "drizzle-orm";
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
 * that would add one more is refused and nothing changes. Counted in the write's transaction,
 * after taking a transaction-scoped advisory lock for (`table`, `owner`): creates for one owner
 * take turns from the count to their commit, so a flood of them at once cannot pass the cap
 * together (150 parallel token creates had left 109 tokens under a cap of 100); other owners
 * never wait.
 */
export async function assertRoom(
  db: Db,
  {
    table,
    owner,
    where,
    cap,
    detail,
    lock = true,
  }: {
    table: PgTable;
    owner: string;
    where: SQL | undefined;
    cap: number;
    detail: string;
    /** False for a check made before the write's transaction (to refuse early): the lock would end with the statement. */
    lock?: boolean;
  },
): Promise<void> {
  if (lock) await db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`cap:${getTableName(table)}:${owner}`}, 0))`);
  const [row] = await db.select({ n: count() }).from(table).where(where);
  if (Number(row?.n ?? 0) >= cap) throw new ApiError("conflict", detail);
}
