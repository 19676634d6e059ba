import type { Db } from "../db/client";
import type { athleteProfiles, users } from "../db/schema";
import type { Scope } from "./scopes";

/** Who is acting. Console sessions act as the person with every scope; tokens carry theirs. */
export type Actor =
  | { kind: "session"; userId: string }
  | { kind: "pat"; userId: string; tokenId: string; scopes: ReadonlySet<Scope> }
  | { kind: "oauth"; userId: string; clientId: string; grantId: string; scopes: ReadonlySet<Scope> }
  | { kind: "app"; clientId: string };

export type AthleteActor = Exclude<Actor, { kind: "app" }>;

/** The acting athlete's own rows, read in the same statement that checked their token. */
export type SelfRows = { user: typeof users.$inferSelect; profile: typeof athleteProfiles.$inferSelect };

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
