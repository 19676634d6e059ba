import type { Actor } from "./actor";
import { ApiError } from "../http/errors";
import type { Scope } from "./scopes";

/** Whether the actor holds a scope: a console session acts with every scope, a token with its own. */
export function hasScope(actor: Actor, scope: Scope): boolean {
  return actor.kind === "session" || (actor.kind !== "app" && actor.scopes.has(scope));
}

/**
 * 403 `insufficient_scope` unless the actor holds every scope named, with the RFC 6750 §3
 * challenge naming those it lacks, so a client knows what to ask the athlete for.
 * @see RFC 6750 §3.1
 */
export function requireScopes(actor: Actor, scopes: readonly Scope[], what = "This endpoint"): void {
  const missing = scopes.filter((s) => !hasScope(actor, s));
  if (!missing.length) return;
  throw new ApiError("insufficient_scope", `${what} requires the ${missing.map((s) => `\`${s}\``).join(" and ")} scope${missing.length > 1 ? "s" : ""}.`, {
    headers: { "WWW-Authenticate": `Bearer error="insufficient_scope", scope="${missing.join(" ")}"` },
  });
}
