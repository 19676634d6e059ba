import { getTableColumns } from "drizzle-orm";
import type { Db } from "../db/client";
import { users, type athleteProfiles } from "../db/schema";
import type { Scope } from "./scopes";
import type { RateLimitResult } from "../http/rate-limit";

/** Who is acting. Console sessions act as the person with every scope; tokens carry theirs. */
export type Actor =
  | { kind: "session"; userId: string }
  | { kind: "pat"; userId: string; tokenId: string; scopes: ReadonlySet<Scope> }
  | { kind: "oauth"; userId: string; clientId: string; grantId: string; scopes: ReadonlySet<Scope> }
  | { kind: "app"; clientId: string };

export type AthleteActor = Exclude<Actor, { kind: "app" }>;

/**
 * A user's columns as requests read them: all but the password hash, which only signing in
 * needs and which no request's context should carry.
 */
export const selfUserColumns = (() => {
  const { passwordHash, ...columns } = getTableColumns(users);
  void passwordHash;
  return columns;
})();

/**
 * The acting athlete's own rows, read in the same statement that checked their token. Read-only:
 * concurrent requests with one token share them (lib/db/batcher.ts).
 */
export type SelfRows = {
  readonly user: Readonly<Omit<typeof users.$inferSelect, "passwordHash">>;
  readonly profile: Readonly<typeof athleteProfiles.$inferSelect>;
};

/** What a bearer token resolves to, whichever kind it is (lib/tokens/resolve-bearer.ts). */
export type ResolvedBearer = {
  actor: Actor;
  /** Key of the rate-limit windows: one per app, one per PAT owner (CONTRACT §10). */
  rateBucket: string;
  /** The owning athlete's account standing, for 402; null for app tokens. */
  billing: { hasSubscription: boolean; trialEndsAt: Date | null } | null;
  /** The token owner's user and profile rows, for athlete tokens. */
  self?: SelfRows;
  /**
   * The request's count in its windows, when the token's own lookup counted it (a PAT's);
   * otherwise the caller counts it.
   */
  counted?: RateLimitResult;
};

/**
 * What every domain verb receives: the actor and a database or open transaction, and, for a
 * token acting as an athlete, that athlete's rows as the request found them (so reading one's
 * own profile costs no second query).
 */
export type Ctx<A extends Actor = Actor> = { db: Db; actor: A; self?: SelfRows };

/** The `source` an activity created by this actor records. */
export function activitySource(actor: AthleteActor): string {
  return actor.kind === "oauth" ? actor.clientId : "manual";
}
