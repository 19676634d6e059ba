import "server-only";
import { randomBytes } from "node:crypto";
import { getDb, type Db } from "../db/client";
import { readBodyUpTo } from "../http/body";
import { clientAddress } from "../http/client-address";
import { isDatabaseUnavailable } from "../http/db-errors";
import { errorText, log } from "../log";
import { oauthClients } from "../db/schema";
import { countOneInWindow } from "../http/rate-limit";
import { HIDDEN_IN_NAME, unreviewedRedirectUriFault } from "./client-metadata";
import { pruneUnusedClients } from "./unused-clients";
import { hasHiddenCharacters } from "../text";
import { oauthDatabaseUnavailable, OAuthError, oauthErrorResponse } from "./errors";
import { knownLengthJson } from "../http/known-length";
import { unstorableText } from "../http/validation";

// Dynamic Client Registration (RFC 7591, CONTRACT §12): an assistant the service has never seen
// registers itself as a public client and then goes through the athlete's consent like any app.

/** Registrations an hour per source address, refused ones included (CONTRACT §12). */
export const REGISTRATIONS_PER_HOUR = 20;
export { UNUSED_REGISTRATION_TTL_MS } from "./unused-clients";
const MAX_REDIRECT_URIS = 10;

/** RFC 7591 §3.2.1: every member registered. */
export type RegisteredClient = {
  client_id: string;
  client_id_issued_at: number;
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method: "none";
  grant_types: ["authorization_code", "refresh_token"];
  response_types: ["code"];
  client_uri?: string;
  logo_uri?: string;
};

const bad = (error: "invalid_client_metadata" | "invalid_redirect_uri", description: string) => new OAuthError(error, description);

/** The members of a registration the service keeps, under their RFC 7591 names. */
type KeptMetadata = { client_name: string; redirect_uris: string[]; client_uri?: string; logo_uri?: string };

/** The request's metadata checked; throws RFC 7591 §3.2.2 errors. */
export function checkRegistration(body: unknown): KeptMetadata {
  if (!body || typeof body !== "object" || Array.isArray(body)) throw bad("invalid_client_metadata", "The body must be a JSON object of client metadata.");
  const m = body as Record<string, unknown>;
  const method = m.token_endpoint_auth_method;
  if (method !== undefined && method !== "none") {
    throw bad("invalid_client_metadata", `Only public clients may register: token_endpoint_auth_method must be "none" or omitted, not ${JSON.stringify(method).slice(0, 60)}.`);
  }
  for (const [key, allowed] of [["grant_types", ["authorization_code", "refresh_token"]], ["response_types", ["code"]]] as const) {
    const v = m[key];
    if (v !== undefined && (!Array.isArray(v) || v.some((x) => !(allowed as readonly unknown[]).includes(x)))) {
      throw bad("invalid_client_metadata", `${key} may only hold ${allowed.join(" and ")}.`);
    }
  }
  const uris = m.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) throw bad("invalid_redirect_uri", "redirect_uris is required: at least one https:// or http:// loopback URL.");
  if (uris.length > MAX_REDIRECT_URIS) throw bad("invalid_redirect_uri", `At most ${MAX_REDIRECT_URIS} redirect URIs.`);
  for (const uri of uris) {
    const fault = unreviewedRedirectUriFault(uri);
    if (fault) throw bad("invalid_redirect_uri", `${JSON.stringify(String(uri)).slice(0, 200)} ${fault}.`);
  }
  const name = m.client_name === undefined ? undefined : m.client_name;
  if (name !== undefined && (typeof name !== "string" || !name.trim() || name.length > 100)) throw bad("invalid_client_metadata", "client_name must be text of 1 to 100 characters.");
  const https = (key: string) => {
    const v = m[key];
    if (v === undefined) return undefined;
    if (typeof v !== "string" || v.length > 2000 || !/^https:\/\//.test(v) || !URL.canParse(v)) throw bad("invalid_client_metadata", `${key} must be an https:// URL.`);
    return v;
  };
  const redirectUris = uris as string[];
  const clientUri = https("client_uri");
  const logoUri = https("logo_uri");
  const kept: KeptMetadata = {
    client_name: (name as string | undefined)?.trim() ?? `Assistant at ${new URL(redirectUris[0]!).host}`,
    redirect_uris: redirectUris,
    ...(clientUri ? { client_uri: clientUri } : {}),
    ...(logoUri ? { logo_uri: logoUri } : {}),
  };
  // What is kept must be text PostgreSQL stores as it is: a NUL fails the insert, and a lone
  // surrogate would be stored as U+FFFD, so a redirect URI holding one could never match a
  // request. Checked on the very object that is stored, so no kept member escapes it; members
  // the service does not keep are ignored, as RFC 7591 §2 asks.
  const unstorable = unstorableText(kept);
  if (unstorable.length) {
    const error = unstorable.some((field) => field.startsWith("redirect_uris")) ? "invalid_redirect_uri" : "invalid_client_metadata";
    throw bad(error, `${unstorable.join(", ")} must be Unicode text without NUL characters.`);
  }
  if (hasHiddenCharacters(kept.client_name)) throw bad("invalid_client_metadata", `client_name ${HIDDEN_IN_NAME}.`);
  return kept;
}

/**
 * Counts one registration attempt of `address` in its hour; throws 429 `slow_down` with
 * Retry-After past REGISTRATIONS_PER_HOUR. Refused attempts count too, so a caller cannot probe
 * for free.
 */
export async function countRegistration(db: Db, address: string, nowMs = Date.now()): Promise<void> {
  const { used, resetS: retryAfterS } = await countOneInWindow(db, `oauth-register:${address}:1h`, 3_600, nowMs);
  if (used > REGISTRATIONS_PER_HOUR) {
    throw new OAuthError("slow_down", `At most ${REGISTRATIONS_PER_HOUR} registrations an hour from one address; retry in ${retryAfterS} s.`, 429, { "Retry-After": String(retryAfterS) });
  }
}

/** Registers a public client and prunes clients no athlete ever authorized within a day (pruneUnusedClients). */
export async function registerClient(db: Db, body: unknown, nowMs = Date.now()): Promise<RegisteredClient> {
  const c = checkRegistration(body);
  const clientId = `dcr_${randomBytes(16).toString("base64url")}`;
  const issuedAt = new Date(Math.floor(nowMs / 1000) * 1000);
  await db.transaction(async (tx) => {
    await pruneUnusedClients(tx, nowMs);
    await tx.insert(oauthClients).values({
      clientId,
      ownerId: null,
      name: c.client_name,
      kind: "public",
      secretHash: null,
      redirectUris: c.redirect_uris,
      homepageUrl: c.client_uri ?? null,
      logoUrl: c.logo_uri ?? null,
      registration: "dynamic",
      sourceHost: new URL(c.redirect_uris[0]!).host,
      createdAt: issuedAt,
    });
  });
  return {
    client_id: clientId,
    client_id_issued_at: issuedAt.getTime() / 1000,
    client_name: c.client_name,
    redirect_uris: c.redirect_uris,
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    ...(c.client_uri ? { client_uri: c.client_uri } : {}),
    ...(c.logo_uri ? { logo_uri: c.logo_uri } : {}),
  };
}

const MAX_REGISTRATION_BYTES = 16 * 1024;

/**
 * POST /oauth/register: RFC 7591's answers and errors (never a problem document). The attempt is
 * counted against its address before anything is read, so refused registrations count too.
 */
export async function registrationEndpoint(req: Request): Promise<Response> {
  try {
    const db = await getDb();
    await countRegistration(db, clientAddress(req));
    if (!/^application\/json\b/i.test(req.headers.get("content-type") ?? "")) {
      throw new OAuthError("invalid_client_metadata", "Send the client metadata as JSON with Content-Type: application/json.");
    }
    const read = await readBodyUpTo(req, MAX_REGISTRATION_BYTES);
    if (read.tooLarge) {
      throw new OAuthError("invalid_client_metadata", `The client metadata is larger than ${MAX_REGISTRATION_BYTES / 1024} KiB.`, 413);
    }
    // RFC 7591 names no error for a body that did not arrive; its body errors are this one.
    if (read.cut) throw new OAuthError("invalid_client_metadata", read.detail);
    let body: unknown;
    try {
      body = JSON.parse(read.bytes.toString("utf8"));
    } catch {
      throw new OAuthError("invalid_client_metadata", "The body is not JSON.");
    }
    return knownLengthJson(await registerClient(db, body), { status: 201, headers: { "Cache-Control": "no-store", Pragma: "no-cache" } });
  } catch (err) {
    if (err instanceof OAuthError) return oauthErrorResponse(err);
    if (isDatabaseUnavailable(err)) return oauthErrorResponse(oauthDatabaseUnavailable());
    log.error("client registration failed", { error: errorText(err) });
    return oauthErrorResponse(new OAuthError("server_error", "The authorization server failed.", 500));
  }
}
