/**
 * A same-site path to return to after sign-in, or `fallback`. Refuses absolute URLs,
 * protocol-relative `//host` and backslash tricks, so sign-in is no open redirect.
 */
export function safeReturnPath(raw: unknown, fallback = "/activities"): string {
  if (typeof raw !== "string" || raw.length > 2000) return fallback;
  if (!raw.startsWith("/") || raw.startsWith("//") || raw.includes("\\")) return fallback;
  try {
    const u = new URL(raw, "http://x.invalid");
    if (u.origin !== "http://x.invalid") return fallback;
    return u.pathname + u.search + u.hash;
  } catch {
    return fallback;
  }
}
