import { getEnv } from "../env";

/** The longest return path kept. */
export const MAX_RETURN_PATH = 12_000;

/**
 * A path on this service to return to after sign-in, or `fallback`, so sign-in is no open
 * redirect. The candidate is resolved against BASE_URL as a browser would resolve it (dot
 * segments, `%2e`, backslashes, tabs and newlines included) and kept only if it stays on
 * BASE_URL's origin. The answer is that URL's path, query and fragment with its leading slashes
 * collapsed to one: `/.//evil.com` resolves to the path `//evil.com`, which a browser given it
 * as a Location would read as another host.
 */
export function safeReturnPath(raw: unknown, fallback = "/activities"): string {
  // Long enough for any authorization request the authorization endpoint takes (a state of
  // 1,000 characters, a redirect_uri of 2,000, percent-encoded again): one over 2,000 was lost.
  if (typeof raw !== "string" || raw.length === 0 || raw.length > MAX_RETURN_PATH) return fallback;
  const base = new URL(getEnv().baseUrl);
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    return fallback;
  }
  if (url.origin !== base.origin) return fallback;
  return `/${url.pathname.replace(/^\/+/, "")}${url.search}${url.hash}`;
}
