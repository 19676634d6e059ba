import type { Db } from "../db/client";
import type { Scope } from "./scopes";

/** Who is acting. Console sessions act as the person with every scope; tokens carry theirs. */
export type Actor =
  | { kind: "session"; userId: string }
  | { kind: "pat"; userId: string; tokenId: string; scopes: ReadonlySet<Scope> }
  | { kind: "oauth"; userId: string; clientId: string; grantId: string; scopes: ReadonlySet<Scope> }
  | { kind: "app"; clientId: string };

export type AthleteActor = Exclude<Actor, { kind: "app" }>;

/** What every domain verb receives: the actor and a database or open transaction. */
export type Ctx<A extends Actor = Actor> = { db: Db; actor: A };

/** The `source` an activity created by this actor records. */
export function activitySource(actor: AthleteActor): string {
  return actor.kind === "oauth" ? actor.clientId : "manual";
}
