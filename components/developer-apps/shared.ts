export const APPS_KEY = ["developer-apps"] as const;
export const appKey = (clientId: string) => ["developer-apps", clientId] as const;
export const usageKey = (clientId: string) => ["developer-apps", clientId, "usage"] as const;
/** What the apps list says on arriving from an app just deleted (set on its page, read once on the list). */
export const APP_DELETED_NOTICE_KEY = ["notice", "app-deleted"] as const;

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

type EditableApp = { name: string; redirect_uris: string[]; logo_url: string | null; homepage_url: string | null };

/**
 * What an edit changed, as the PATCH to send: only the members that differ from the app as it
 * is. A member sent back unchanged would be checked again, and a value the service registered
 * under other rules (the demo app's `http://localhost` homepage) would fail a rename.
 */
export function appChanges(app: EditableApp, form: { name: string; redirect_uris: string[]; logo_url: string; homepage_url: string }): Partial<EditableApp> {
  const changes: Partial<EditableApp> = {};
  if (form.name.trim() !== app.name) changes.name = form.name;
  if (form.redirect_uris.join("\n") !== app.redirect_uris.join("\n")) changes.redirect_uris = form.redirect_uris;
  if ((form.logo_url.trim() || null) !== app.logo_url) changes.logo_url = form.logo_url.trim() || null;
  if ((form.homepage_url.trim() || null) !== app.homepage_url) changes.homepage_url = form.homepage_url.trim() || null;
  return changes;
}
