import { sql, type SQL } from "drizzle-orm";
import { alias, type AnyPgColumn } from "drizzle-orm/pg-core";
import { oauthCodes, oauthGrants, oauthTokenFamilies } from "../db/schema";
import { EVENT_SCOPES } from "../events/catalog";

type Expr = SQL | AnyPgColumn;

// Aliases of their own, so the rule can sit inside a query that names these tables itself.
const g = alias(oauthGrants, "entitled_grant");
const f = alias(oauthTokenFamilies, "entitled_family");
const c = alias(oauthCodes, "entitled_code");

/** The scope an event of this type sits behind (EVENT_SCOPES), as SQL; null for kinds no grant covers. */
export function requiredScopeSql(type: Expr): SQL {
  return sql.join(
    [sql`(case ${type}`, ...Object.entries(EVENT_SCOPES).map(([t, scope]) => sql`when ${t} then ${scope}`), sql`end)`],
    sql` `,
  );
}

/**
 * SPEC §6.2 (2) and (3) for one event, judged as of the instant it occurred, however late the
 * check runs: the athlete has an active grant to the app that already existed then, and that
 * already carried the event's scope then. So an event written before the athlete authorized the
 * app, or before they added the scope it sits behind, never reaches the app, even when fan-out
 * runs after the authorization.
 *
 * A grant records only its current scopes, widened in place (`updated_at` moves when scopes are
 * added, lib/oauth/authorize.ts). Unchanged since the event, its scopes are the ones it had then.
 * Widened since, a scope counts only if something written before the event shows the grant
 * held it: an authorization code issued for it (written with each approval, in the approval's
 * transaction) or a token family (written at each code exchange, never deleted).
 *
 * Only a grant in force counts: a disconnect ends the events at once, for sending and for
 * `/v1/app/events` alike (which lists what a revoked grant was sent from the deliveries made).
 *
 * Every argument is an SQL expression of the enclosing query (the event's and the app's columns).
 */
export function entitledAt(e: { clientId: Expr; athleteId: Expr; type: Expr; occurredAt: Expr }): SQL {
  const scope = requiredScopeSql(e.type);
  return sql`exists (
    select 1 from ${oauthGrants} ${g}
    where ${g.clientId} = ${e.clientId} and ${g.userId} = ${e.athleteId} and ${g.revokedAt} is null
      and ${g.createdAt} <= ${e.occurredAt}
      and ${scope} = any(${g.scopes})
      and (${g.updatedAt} <= ${e.occurredAt}
        or exists (
          select 1 from ${oauthTokenFamilies} ${f}
          where ${f.grantId} = ${g.id} and ${f.createdAt} <= ${e.occurredAt} and ${scope} = any(${f.scopes}))
        or exists (
          select 1 from ${oauthCodes} ${c}
          where ${c.grantId} = ${g.id} and ${c.createdAt} <= ${e.occurredAt} and ${scope} = any(${c.scopes}))))`;
}

/**
 * Whether an event goes to an app (fan-out's rule, and the rule for sending it again): an event
 * addressed to one app (`client_id`: `athlete.deauthorized`, a test event) to that app alone;
 * any other while SPEC §6.2 holds for it (`entitledAt`). Disconnecting ends the second kind at
 * once: "events stop together with the access".
 */
export function reachesApp(e: { clientId: Expr; athleteId: Expr; type: Expr; occurredAt: Expr }, appClientId: Expr): SQL {
  return sql`(case
    when ${e.clientId} is not null then ${appClientId} = ${e.clientId}
    else ${entitledAt({ clientId: appClientId, athleteId: e.athleteId, type: e.type, occurredAt: e.occurredAt })}
  end)`;
}
