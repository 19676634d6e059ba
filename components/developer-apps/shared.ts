export const APPS_KEY = ["developer-apps"] as const;
export const appKey = (clientId: string) => ["developer-apps", clientId] as const;
export const usageKey = (clientId: string) => ["developer-apps", clientId, "usage"] as const;

export const appPath = (clientId: string) => `/api/console/apps/${encodeURIComponent(clientId)}`;

export const KIND_LABELS = {
  confidential: "Confidential",
  public: "Public (PKCE only)",
} as const;

/** The textarea's lines as the API takes them: trimmed, blank lines dropped. */
export function linesOf(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

/** The API's redirect-URI field errors (`redirect_uris`, `redirect_uris.2`), for the textarea. */
export function redirectUriErrors(fields: Record<string, string>): string[] {
  return Object.entries(fields)
    .filter(([field]) => field === "redirect_uris" || field.startsWith("redirect_uris."))
    .map(([, detail]) => detail);
}
