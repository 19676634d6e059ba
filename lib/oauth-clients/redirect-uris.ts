import { ApiError, type FieldError } from "../http/errors";
import { hasHiddenCharacters } from "../text";
import { docsRedirectUri } from "../openapi/docs-redirect";

export type AppKind = "confidential" | "public";

export const MAX_REDIRECT_URIS = 10;
export const MAX_URI_LENGTH = 2000;

/** The loopback hosts an `http:` URI may name (RFC 8252 §7.3): IP literals, never `localhost`. */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]"]);

/** RFC 3986 §3.1 scheme syntax. */
const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;

/**
 * Why `uri` cannot be registered as a redirect URI for an app of `kind`, or null when it can.
 * The stored string is compared exactly at authorization time (OAuth 2.1 §4.1.1), so it is
 * checked here and kept as written.
 *
 * - absolute, with no fragment                                   @see RFC 6749 §3.1.2
 * - no wildcards: exact matching only                            @see RFC 9700 §2.1, §4.1.3
 * - `https:`, or `http:` on a loopback IP literal                @see RFC 8252 §7.3, §8.3; RFC 9700 §2.6
 * - private-use schemes in reverse-domain form, for public apps  @see RFC 8252 §7.1, §8.4
 */
/**
 * Why `uri` would not read as what it matches, or null: a redirect URI is kept and compared as
 * written, and shown to the athlete. Refused: spaces, hidden characters (lib/text.ts), a
 * backslash (a browser reads `https:\\host\\cb` as https://host/cb), an http(s) host not
 * right after `//` (`https:///cb` parses with the host "cb"), and a host not in ASCII
 * (`https://a.example∕cb`, a division slash, reads as a.example/cb but is a.xn--examplecb-…).
 * Shared by the console's apps and self-registered clients (client-metadata.ts).
 */
export function uriReadingProblem(uri: string): string | null {
  if (/\s/.test(uri)) return "must not contain spaces";
  if (hasHiddenCharacters(uri, { strict: true })) return "must not contain control, bidi or zero-width characters";
  if (uri.includes("\\")) return "must not contain backslashes";
  if (/^https?:/i.test(uri) && !/^https?:\/\/[^/?#]/i.test(uri)) return "must name its host right after the scheme, as https://example.com/callback";
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(uri)?.[1];
  if (authority && /[^\x21-\x7e]/.test(authority)) return "must write its host in ASCII (xn--… for a name in other letters)";
  return null;
}

export function redirectUriProblem(uri: string, kind: AppKind): string | null {
  if (uri.length === 0) return "is empty";
  if (uri.length > MAX_URI_LENGTH) return `is longer than ${MAX_URI_LENGTH} characters`;
  const unreadable = uriReadingProblem(uri);
  if (unreadable) return unreadable;
  if (uri.includes("*")) return "must not contain wildcards: register each redirect URI exactly";
  if (uri.includes("#")) return "must not contain a fragment (#…)";
  if (!SCHEME.test(uri)) return "must be an absolute URI, such as https://example.com/callback";
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "is not a valid URI";
  }
  if (url.username || url.password) return "must not contain a user name or password";
  const scheme = url.protocol.slice(0, -1).toLowerCase();

  if (scheme === "https") {
    if (!url.hostname) return "must name a host";
    return null;
  }
  if (scheme === "http") {
    const host = url.hostname.toLowerCase();
    if (LOOPBACK_HOSTS.has(host)) return null;
    if (host === "localhost" || host.endsWith(".localhost")) {
      return "must not use localhost: use the loopback IP http://127.0.0.1 (or http://[::1]) instead (RFC 8252 §8.3)";
    }
    return "must use https:// (plain http:// is allowed only for the loopback addresses 127.0.0.1 and [::1])";
  }
  // Anything else is a private-use scheme, which only a native app on the device can receive.
  if (kind === "confidential") {
    return "must use https:// for a confidential app (custom schemes are for public, native apps)";
  }
  if (!scheme.includes(".")) {
    return "must use https://, or a private-use scheme in reverse-domain form such as com.example.app:/callback (RFC 8252 §7.1)";
  }
  return null;
}

/**
 * The problem of a redirect URI over MAX_URI_LENGTH, naming which one (its place in the list, from
 * 1, and its start), since the URI itself is too long to repeat.
 */
export function tooLongRedirectUri(uri: string, index: PropertyKey | undefined): string {
  const which = typeof index === "number" ? `redirect URI ${index + 1}` : "a redirect URI";
  return `${which} (${uri.slice(0, 40)}…) is longer than ${MAX_URI_LENGTH} characters`;
}

/**
 * Checks a whole list and returns it trimmed and without duplicates, or throws 400 with one
 * field error per bad entry (`redirect_uris.2`). A URI in `registered` (the app's list before
 * this change) stays as it is without being checked again: a list sent back whole, to add or
 * remove another, must not fail on one the service itself registered under older rules (the
 * demo app's `{BASE_URL}/demo/callback` on `http://localhost`, CONTRACT §8). The service's own
 * redirect page for /docs's Authorize (`docsRedirectUri`) is taken as it is too.
 */
export function assertValidRedirectUris(uris: readonly string[], kind: AppKind, registered: readonly string[] = []): string[] {
  const trimmed = [...new Set(uris.map((u) => u.trim()).filter((u) => u.length > 0))];
  const errors: FieldError[] = [];
  if (trimmed.length === 0) {
    errors.push({ field: "redirect_uris", code: "invalid_request", detail: "register at least one redirect URI" });
  } else if (trimmed.length > MAX_REDIRECT_URIS) {
    errors.push({ field: "redirect_uris", code: "invalid_request", detail: `register at most ${MAX_REDIRECT_URIS} redirect URIs` });
  }
  trimmed.forEach((uri, i) => {
    const problem = registered.includes(uri) || uri === docsRedirectUri() ? null : redirectUriProblem(uri, kind);
    if (problem) errors.push({ field: `redirect_uris.${i}`, code: "invalid_request", detail: `${JSON.stringify(uri)} ${problem}` });
  });
  if (errors.length) {
    throw new ApiError("invalid_request", `The redirect URIs are invalid: ${errors.map((e) => e.detail).join("; ")}`, { errors });
  }
  return trimmed;
}

/**
 * Why `url` cannot be shown as an app's logo or homepage, or null. Browsers load the logo on
 * the consent screen, so it must not be mixed content or a script URL.
 */
export function pageUrlProblem(url: string): string | null {
  if (url.length > MAX_URI_LENGTH) return `is longer than ${MAX_URI_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "must be an absolute URL, such as https://example.com";
  }
  if (parsed.username || parsed.password) return "must not contain a user name or password";
  if (parsed.protocol === "https:" && parsed.hostname) return null;
  if (parsed.protocol === "http:" && LOOPBACK_HOSTS.has(parsed.hostname.toLowerCase())) return null;
  return "must be an https:// URL";
}
