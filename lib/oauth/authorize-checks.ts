import { isScope, type Scope } from "../auth/scopes";
import type { TokenResource } from "../db/schema";
import type { Env } from "../env";
import { resourceOf } from "./resources";
import { MCP_SCOPES } from "./discovery";
import { UNREVIEWED_LOOPBACK_HOSTS } from "./client-metadata";
import { OAuthError } from "./errors";
import type { OAuthClient } from "./client-auth";

/**
 * The authorization endpoint's checks, each small and named after what it enforces. The first
 * two decide whether it is safe to redirect at all: until both pass, errors go on a page.
 */
export type AuthorizeParams = Record<string, string | undefined>;

export const AUTHORIZE_PARAMS = [
  "client_id",
  "redirect_uri",
  "response_type",
  "scope",
  "state",
  "code_challenge",
  "code_challenge_method",
  "resource",
] as const;

/** An error shown on a page, because redirecting would be unsafe. */
export class UnsafeToRedirect extends Error {}

const LOOPBACK = new Set(["127.0.0.1", "[::1]"]);

/**
 * Exact string match with a registered URI; for public clients a loopback IP redirect may use
 * any port (RFC 8252 §7.3).
 * @see RFC 6749 §3.1.2.3, RFC 9700 §4.1.3, RFC 8252 §7.3
 */
export function checkRedirectUri(client: OAuthClient, redirectUri: string | undefined): string {
  if (!redirectUri) throw new UnsafeToRedirect("The request has no redirect_uri.");
  if (client.redirectUris.includes(redirectUri)) return redirectUri;
  if (client.kind === "public") {
    // Clients the service has not reviewed may also come back to http://localhost on any port (CONTRACT §12).
    const loopback = client.registration === "console" ? LOOPBACK : UNREVIEWED_LOOPBACK_HOSTS;
    let asked: URL;
    try {
      asked = new URL(redirectUri);
    } catch {
      throw new UnsafeToRedirect("The redirect_uri is not a valid URL.");
    }
    if (asked.protocol === "http:" && loopback.has(asked.hostname)) {
      for (const registered of client.redirectUris) {
        // The registered URI with the port asked for, as a string, must be the redirect_uri
        // exactly: no userinfo, no dot segments, no characters the URL parser drops (a trailing
        // NUL passed the comparison of parsed parts and failed as the code was stored).
        const r = new URL(registered);
        if (r.protocol !== "http:" || r.hostname !== asked.hostname) continue;
        r.port = asked.port;
        if (r.href === redirectUri) return redirectUri;
        // Port 80 written out is a port too (any port, RFC 8252 §7.3), though the parser drops it.
        if (asked.port === "" && `${r.origin}:80${r.href.slice(r.origin.length)}` === redirectUri) return redirectUri;
      }
    }
  }
  throw new UnsafeToRedirect("The redirect_uri is not registered for this app.");
}

/**
 * Where a redirect_uri sends the athlete, as the consent and error pages name it: its host, or
 * for a native app's private-use scheme (`com.example.app:/oauth/cb`, RFC 8252 §7.1), which has
 * none, that scheme.
 */
export function redirectDestination(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.host || url.protocol.replace(/:$/, "");
}

/** @see RFC 6749 §3.1: parameters sent more than once are an error. */
export function checkNoRepeats(repeated: string[]): void {
  if (repeated.length) throw new OAuthError("invalid_request", `Parameters sent more than once: ${repeated.join(", ")}.`);
}

/** @see RFC 6749 §4.1.1; §4.1.2.1: a missing parameter is `invalid_request`, an unsupported one `unsupported_response_type`. */
export function checkResponseType(responseType: string | undefined): void {
  if (responseType === undefined) throw new OAuthError("invalid_request", "response_type is required: send `response_type=code`.");
  if (responseType !== "code") throw new OAuthError("unsupported_response_type", "response_type must be `code`.");
}

/**
 * RFC 8707 §2: `resource` may come more than once, for a token meant for several resources.
 * The same one named again is that one; a token here is for one of them only, so two different
 * ones are `invalid_target`.
 */
export function checkResourceRepeats(values: readonly string[]): void {
  if (new Set(values).size > 1) throw severalResources();
}

export function severalResources(): OAuthError {
  return new OAuthError("invalid_target", "A token here is for one resource: name one `resource`.");
}

/**
 * S256 is required of every client; `plain` is refused (OAuth 2.1 §4.1.1, RFC 9700 §2.1.1).
 * @see RFC 7636 §4.2–4.3
 */
export function checkPkce(challenge: string | undefined, method: string | undefined): string {
  if (!challenge) throw new OAuthError("invalid_request", "code_challenge is required (PKCE with S256).");
  if (method !== "S256") throw new OAuthError("invalid_request", "code_challenge_method must be S256.");
  if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) throw new OAuthError("invalid_request", "code_challenge must be the base64url SHA-256 of the verifier (43 characters).");
  return challenge;
}

/**
 * The scopes asked for, for the resource the tokens will be for: the MCP server's tools only
 * read (CONTRACT §12), so a write scope with `resource` the MCP server is refused rather than
 * put on a consent screen that tells the athlete an assistant can change nothing (and added to
 * the app's grant, where its `/v1` tokens would then carry it without asking again).
 * @see RFC 6749 §3.3
 */
export function checkScope(scope: string | undefined, resource: TokenResource = "v1"): Scope[] {
  const asked = (scope ?? "").split(" ").filter(Boolean);
  if (!asked.length) throw new OAuthError("invalid_scope", "Ask for at least one scope.");
  const unknown = asked.filter((s) => !isScope(s));
  if (unknown.length) throw new OAuthError("invalid_scope", `Unknown scope: ${unknown.join(", ")}.`);
  const scopes = [...new Set(asked)] as Scope[];
  const notForMcp = resource === "mcp" ? scopes.filter((s) => !MCP_SCOPES.includes(s)) : [];
  if (notForMcp.length) {
    throw new OAuthError("invalid_scope", `The MCP server's tools only read: ${notForMcp.join(", ")} is not for it. Ask for ${MCP_SCOPES.join(", ")} with this resource.`);
  }
  return scopes;
}

/** Which of this server's resources the tokens are for (RFC 8707 §2); `/v1` when none is named. */
export function checkResource(resource: string | undefined, env: Env): TokenResource {
  if (resource === undefined) return "v1";
  const known = resourceOf(env, resource);
  if (!known) throw new OAuthError("invalid_target", `resource must be ${env.apiBaseUrl} or ${env.mcpUrl}.`);
  return known;
}

export function checkState(state: string | undefined): void {
  if (state !== undefined && state.length > 1000) throw new OAuthError("invalid_request", "state is longer than 1000 characters.");
}

/**
 * The authorization request as a page's search parameters give it: the first value of each
 * parameter, the names that came more than once (RFC 6749 §3.1: a parameter must not be
 * repeated), and the query as received, every value of it, to come back to after sign-in (where
 * a repeat is refused as it is now). A parameter sent without a value is as if it were omitted
 * (RFC 6749 §3.1): `resource=` asks for the default resource, `state=` sends no state back.
 */
export function readAuthorizeParams(raw: Record<string, string | string[] | undefined>): {
  params: AuthorizeParams;
  repeated: string[];
  query: URLSearchParams;
} {
  const params: AuthorizeParams = {};
  const repeated: string[] = [];
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(raw)) {
    const values = (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x) => x !== "");
    if (values.length === 0) continue;
    // The same `resource` named twice is one (RFC 8707 §2; checkResourceRepeats).
    if (values.length > 1 && !(k === "resource" && new Set(values).size === 1)) repeated.push(k);
    params[k] = values[0];
    for (const x of values) query.append(k, x);
  }
  return { params, repeated, query };
}
