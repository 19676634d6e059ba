import { getEnv } from "../env";

/** Where /docs's Authorize comes back to: an app registered with this redirect URI can be authorized from the reference. */
export const DOCS_OAUTH_REDIRECT_PATH = "/docs/assets/oauth2-redirect.html";

/**
 * The service's own redirect page for /docs, at its base URL: an app may register it whatever
 * the rules for other URIs say (the base URL of a service on a laptop is http://localhost),
 * since it is this service's page, which hands the code only to the /docs page that opened it.
 */
export function docsRedirectUri(): string {
  return `${getEnv().baseUrl}${DOCS_OAUTH_REDIRECT_PATH}`;
}
