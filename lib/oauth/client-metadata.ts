import "server-only";
import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { oauthClients } from "../db/schema";
import { getEnv } from "../env";
import { countOneInWindow } from "../http/rate-limit";
import { unstorableText } from "../http/validation";
import { uriReadingProblem } from "../oauth-clients/redirect-uris";
import { hasHiddenCharacters } from "../text";
import { sendOutbound } from "../webhooks/outbound";
import { announceClientChange, type OAuthClient } from "./client-cache";
import { pruneUnusedClients } from "./unused-clients";

// Client ID Metadata Documents (CONTRACT §12): a client the service has never seen names itself
// by an https URL, and the document at that URL says who it is and where it may be sent back.
// It is fetched through the same outbound module as webhooks (connect-time address checks, no
// redirects), 5 s and 5 KiB at most, and kept as an oauth_clients row that the authorization,
// the consent screen and the token endpoint read like any other client.

const FETCH_TIMEOUT_MS = 5_000;
/** The longest client_id: a metadata document's URL. */
export const MAX_CLIENT_ID_CHARS = 512;
const MAX_DOCUMENT_BYTES = 5 * 1024;

/**
 * How long a fetched document is used before it is fetched again: what its Cache-Control
 * (max-age, or no-store / no-cache as 0) or Expires allows, held between 5 minutes, so one
 * authorization never fetches twice and a flood of authorizations cannot make the service a
 * fetcher, and 24 hours, so a client's change (a redirect URI removed) is seen within a day.
 * Without caching headers: 1 hour.
 */
export const METADATA_TTL_BOUNDS_S = { min: 300, max: 86_400, default: 3_600 } as const;

/** A document that cannot be used, in words for the error page. */
export class ClientMetadataError extends Error {}

/** The loopback hosts an unreviewed client may come back to on any port (CONTRACT §12). */
export const UNREVIEWED_LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["127.0.0.1", "[::1]", "localhost"]);

function isLoopbackHttp(u: URL): boolean {
  return u.protocol === "http:" && UNREVIEWED_LOOPBACK_HOSTS.has(u.hostname);
}

/**
 * Where a client the service has not reviewed may be sent back (metadata documents and RFC 7591
 * registrations alike): an https:// URL, or http:// on loopback (127.0.0.1, [::1], localhost),
 * without a fragment. Null when `uri` is one; else why not, in words that follow the URI.
 */
export function unreviewedRedirectUriFault(uri: unknown): string | null {
  if (typeof uri !== "string") return "is not text";
  if (uri.length > 2000) return "is longer than 2000 characters";
  // Read as written (uriReadingProblem); a NUL or a lone surrogate is left to the check of what
  // is stored, which names the member.
  const unreadable = uriReadingProblem(uri.replace(/[\u0000\uD800-\uDFFF]/g, ""));
  if (unreadable) return unreadable;
  const u = URL.parse(uri);
  if (!u || !(u.protocol === "https:" || isLoopbackHttp(u))) return "is not an https:// URL or an http:// loopback URL (127.0.0.1, [::1], localhost)";
  // RFC 6749 §3.1.2: the endpoint URI MUST NOT include a fragment component, even an empty one
  // (`…/cb#`, where `u.hash` is empty): a `#` can only begin one.
  if (uri.includes("#")) return "has a fragment (#…), which a redirect URI must not have";
  // Shown to the athlete as where they are sent back: `https://claude.ai@evil.example/cb` reads
  // as one host and goes to another, and a `*` names no host at all.
  if (u.username || u.password) return "has a user name or password before its host (user@host), which a redirect URI must not have";
  if (u.hostname.includes("*")) return "has a * in its host, which names no one host";
  return null;
}

/** Why a client's name is refused when it holds characters that hide or turn around the text beside it (lib/text.ts). */
export const HIDDEN_IN_NAME =
  "holds control, format (bidi or zero-width), private-use or unassigned characters, which change how the text shown beside a name reads";

/** Whether a client_id names a metadata document: an https URL with a path (http on loopback where private networks are allowed). */
export function isMetadataDocumentUrl(clientId: string): boolean {
  if (clientId.length > MAX_CLIENT_ID_CHARS) return false;
  let u: URL;
  try {
    u = new URL(clientId);
  } catch {
    return false;
  }
  if (u.pathname === "/" || u.hash || u.username || u.password || u.href !== clientId) return false;
  return u.protocol === "https:" || (getEnv().webhooksAllowPrivateNetworks && isLoopbackHttp(u));
}

/** The lifetime a response's caching headers give, within METADATA_TTL_BOUNDS_S. */
export function metadataTtlS(cacheControl: string | null, expires: string | null, nowMs = Date.now()): number {
  const { min, max, default: fallback } = METADATA_TTL_BOUNDS_S;
  let ttl: number | undefined;
  const cc = (cacheControl ?? "").toLowerCase();
  if (/(^|,)\s*(no-store|no-cache)\s*(,|$)/.test(cc)) ttl = 0;
  else {
    const m = /(^|,)\s*(?:s-maxage|max-age)\s*=\s*"?(\d+)"?/.exec(cc);
    if (m) ttl = Number(m[2]);
    else if (expires) {
      const at = Date.parse(expires);
      ttl = Number.isNaN(at) ? 0 : Math.round((at - nowMs) / 1000);
    }
  }
  return Math.min(max, Math.max(min, ttl ?? fallback));
}

/** What the service keeps of a document, under the document's own member names. */
type Document = { client_name: string; redirect_uris: string[]; logo_uri: string | null; client_uri: string | null };

/** Checks a document's content; throws ClientMetadataError saying what is wrong. */
export function parseMetadataDocument(url: string, text: string): Document {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ClientMetadataError("it is not JSON");
  }
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) throw new ClientMetadataError("it is not a JSON object");
  const d = doc as Record<string, unknown>;
  if (d.client_id !== url) throw new ClientMetadataError(`its client_id is not the address it was fetched from (${url})`);
  if (typeof d.client_name !== "string" || !d.client_name.trim() || d.client_name.length > 100) {
    throw new ClientMetadataError("it has no client_name (a name of at most 100 characters)");
  }
  const method = d.token_endpoint_auth_method;
  if (method !== undefined && method !== "none") {
    throw new ClientMetadataError(`it asks for client authentication (${String(method)}); only public clients (token_endpoint_auth_method "none") may register by metadata document`);
  }
  const uris = d.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10) throw new ClientMetadataError("it has no redirect_uris (1 to 10 URLs)");
  for (const uri of uris) {
    const fault = unreviewedRedirectUriFault(uri);
    if (fault) throw new ClientMetadataError(`its redirect URI ${JSON.stringify(String(uri)).slice(0, 200)} ${fault}`);
  }
  const https = (v: unknown) => (typeof v === "string" && v.length <= 2000 && /^https:\/\//.test(v) && URL.canParse(v) ? v : null);
  const kept: Document = { client_name: d.client_name.trim(), redirect_uris: uris as string[], logo_uri: https(d.logo_uri), client_uri: https(d.client_uri) };
  // What is kept must be text PostgreSQL stores as it is: a NUL fails the insert, and a lone
  // surrogate would be stored as U+FFFD, so a redirect URI holding one could never match a
  // request. Checked on the very object that is stored, so no kept member escapes it.
  const unstorable = unstorableText(kept);
  if (unstorable.length) {
    throw new ClientMetadataError(`its ${unstorable.join(", ")} ${unstorable.length > 1 ? "hold" : "holds"} a NUL character or text that is not valid Unicode`);
  }
  if (hasHiddenCharacters(d.client_name)) throw new ClientMetadataError(`its client_name ${HIDDEN_IN_NAME}`);
  return kept;
}

/** Fetches and checks the document at `url`; throws ClientMetadataError in words. */
async function fetchDocument(url: string): Promise<{ doc: Document; ttlS: number }> {
  const env = getEnv();
  const r = await sendOutbound({
    url,
    method: "GET",
    headers: { accept: "application/json" },
    allowPrivate: env.webhooksAllowPrivateNetworks,
    timeoutMs: FETCH_TIMEOUT_MS,
    readLimitBytes: MAX_DOCUMENT_BYTES,
  });
  if (r.outcome === "not_sent") {
    const why: Record<string, string> = {
      blocked_address: r.detail,
      dns: "its host name does not resolve",
      connection_refused: "its server refused the connection",
      timeout: `its server did not answer within ${FETCH_TIMEOUT_MS / 1000} s`,
      tls: "its server's TLS certificate is not valid",
    };
    throw new ClientMetadataError(`it could not be fetched: ${why[r.error] ?? "the connection failed"}`);
  }
  if (r.status >= 300 && r.status < 400) throw new ClientMetadataError(`its server answered with a redirect (HTTP ${r.status}); redirects are not followed`);
  if (r.status !== 200) throw new ClientMetadataError(`its server answered HTTP ${r.status}`);
  if (r.bodyError !== null) throw new ClientMetadataError(`its server did not send the whole document within ${FETCH_TIMEOUT_MS / 1000} s, or broke the connection`);
  if (!r.bodyComplete) throw new ClientMetadataError(`it is larger than ${MAX_DOCUMENT_BYTES / 1024} KiB`);
  return { doc: parseMetadataDocument(url, r.bodyExcerpt), ttlS: metadataTtlS(r.cacheControl, r.expires) };
}

/** How long a document that could not be used is answered with the same refusal before it is fetched again. */
export const REFUSED_DOCUMENT_TTL_MS = 30_000;
/** Refusals remembered at most (the oldest forgotten first). */
const MAX_REFUSED_DOCUMENTS = 1_000;
/** Fetches under way, by URL: authorizations that name one document together share one fetch. */
const fetching = new Map<string, Promise<{ doc: Document; ttlS: number }>>();
/** Documents that could not be used, by URL, with until when that stands (per process). */
const refused = new Map<string, { untilMs: number; error: ClientMetadataError }>();

/** The refusal of the document at `url` that still stands, if one does. */
function standingRefusal(url: string): ClientMetadataError | undefined {
  const known = refused.get(url);
  return known && known.untilMs > Date.now() ? known.error : undefined;
}

/**
 * `fetchDocument`, at most once at a time per URL, and not again for REFUSED_DOCUMENT_TTL_MS
 * after a refusal: anyone signed in can name any URL, and each page load fetched it anew (50
 * loads at once were 50 requests to whatever server the URL names).
 */
function fetchDocumentOnce(url: string): Promise<{ doc: Document; ttlS: number }> {
  const known = standingRefusal(url);
  if (known) return Promise.reject(known);
  let pending = fetching.get(url);
  if (!pending) {
    pending = fetchDocument(url)
      .catch((err: unknown) => {
        if (err instanceof ClientMetadataError) {
          refused.delete(url);
          refused.set(url, { untilMs: Date.now() + REFUSED_DOCUMENT_TTL_MS, error: err });
          if (refused.size > MAX_REFUSED_DOCUMENTS) refused.delete(refused.keys().next().value!);
        }
        throw err;
      })
      .finally(() => fetching.delete(url));
    fetching.set(url, pending);
  }
  return pending;
}

/**
 * Documents fetched for one person in an hour. Each names any URL, so without a bound a
 * signed-in account could make the service send requests to a third party as fast as it
 * loads pages (and fill the table of clients); what the service has stored, and a fetch
 * already under way, costs nothing and is not counted.
 */
export const METADATA_FETCHES_PER_HOUR = 30;

/** Counts one fetch for `userId` in its hour; ClientMetadataError (shown on the page) past the bound. */
async function countFetch(db: Db, userId: string, nowMs: number): Promise<void> {
  const { used, resetS } = await countOneInWindow(db, `oauth-metadata:${userId}:1h`, 3_600, nowMs);
  if (used > METADATA_FETCHES_PER_HOUR) {
    const minutes = Math.ceil(resetS / 60);
    throw new ClientMetadataError(
      `the service has fetched ${METADATA_FETCHES_PER_HOUR} apps' documents for you within the hour, the most it does for one person; try again in ${minutes} minute${minutes === 1 ? "" : "s"}`,
    );
  }
}

/**
 * The client a metadata-document client_id names: the stored one while it is fresh, else the
 * document fetched again (`fetchDocumentOnce`, counted for `userId`: METADATA_FETCHES_PER_HOUR)
 * and stored; a new one prunes the clients no athlete authorized within a day
 * (pruneUnusedClients). Throws ClientMetadataError when the document cannot be used (the
 * authorization shows it on a page and never redirects).
 */
export async function metadataDocumentClient(db: Db, url: string, userId: string, nowMs = Date.now()): Promise<OAuthClient> {
  const [row] = await db.select().from(oauthClients).where(eq(oauthClients.clientId, url)).limit(1);
  if (row && (row.registration !== "metadata_document" || (row.metadataExpiresAt && row.metadataExpiresAt.getTime() > nowMs))) return row;
  if (!standingRefusal(url) && !fetching.has(url)) await countFetch(db, userId, nowMs);
  const { doc, ttlS } = await fetchDocumentOnce(url);
  const values = {
    name: doc.client_name,
    kind: "public" as const,
    secretHash: null,
    redirectUris: doc.redirect_uris,
    logoUrl: doc.logo_uri,
    homepageUrl: doc.client_uri,
    registration: "metadata_document" as const,
    sourceHost: new URL(url).host,
    metadataFetchedAt: new Date(nowMs),
    metadataExpiresAt: new Date(nowMs + ttlS * 1000),
  };
  const [stored] = await db.transaction(async (tx) => {
    if (!row) await pruneUnusedClients(tx, nowMs);
    await announceClientChange(tx, url);
    return tx
      .insert(oauthClients)
      .values({ clientId: url, ownerId: null, ...values })
      .onConflictDoUpdate({ target: oauthClients.clientId, set: values })
      .returning();
  });
  return stored!;
}
