import "server-only";
import { createHash, randomBytes } from "node:crypto";
import { DEMO_CONFIDENTIAL_CLIENT_ID, DEMO_CONFIDENTIAL_SECRET } from "../db/seed";
import { getEnv } from "../env";

// The demo world's confidential app (CONTRACT §8), played by this service itself so a newcomer
// can walk the authorization code flow in a browser: what a server-side app does, in the open.

export const DEMO_CLIENT_ID = DEMO_CONFIDENTIAL_CLIENT_ID;
export const DEMO_SCOPES = ["athlete.read", "activities.read"] as const;
/** The cookie that carries the PKCE verifier and state from the start of the flow to its return. */
export const DEMO_COOKIE = "demo_oauth";
/**
 * Site-wide: after consent, Next.js renders /demo/callback in the answer to the consent form's
 * POST to /oauth/authorize, so a cookie scoped to /demo would not be seen there.
 */
export const DEMO_COOKIE_PATH = "/";
const DEMO_COOKIE_MAX_AGE_S = 10 * 60;

export function demoRedirectUri(): string {
  return `${getEnv().baseUrl}/demo/callback`;
}

/**
 * A fresh PKCE pair and state: a 43-character verifier from 32 random bytes, its S256
 * challenge, and an unguessable state bound to this browser by the cookie.
 * @see RFC 7636 §4.1, §4.2; RFC 6749 §10.12
 */
export function newDemoFlow(): { verifier: string; challenge: string; state: string } {
  const verifier = randomBytes(32).toString("base64url");
  return {
    verifier,
    challenge: createHash("sha256").update(verifier).digest("base64url"),
    state: randomBytes(16).toString("base64url"),
  };
}

/** The authorization request the demo app sends the athlete to. @see RFC 6749 §4.1.1, RFC 8707 §2.1 */
export function demoAuthorizeUrl(flow: { challenge: string; state: string }): string {
  const env = getEnv();
  const q = new URLSearchParams({
    response_type: "code",
    client_id: DEMO_CLIENT_ID,
    redirect_uri: demoRedirectUri(),
    scope: DEMO_SCOPES.join(" "),
    code_challenge: flow.challenge,
    code_challenge_method: "S256",
    state: flow.state,
    resource: env.apiBaseUrl,
  });
  return `${env.baseUrl}/oauth/authorize?${q.toString().replace(/\+/g, "%20")}`;
}

export const demoCookieOptions = () => ({
  httpOnly: true,
  sameSite: "lax" as const,
  secure: getEnv().baseUrl.startsWith("https:"),
  path: DEMO_COOKIE_PATH,
  maxAge: DEMO_COOKIE_MAX_AGE_S,
});

/** The cookie's value: state and verifier are both base64url, so a dot separates them. */
export function encodeDemoCookie(flow: { state: string; verifier: string }): string {
  return `${flow.state}.${flow.verifier}`;
}

export function decodeDemoCookie(value: string | undefined): { state: string; verifier: string } | null {
  const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43,128})$/.exec(value ?? "");
  return m ? { state: m[1]!, verifier: m[2]! } : null;
}

export type HttpResult = { status: number; body: unknown };
export type DemoExchange = { token: HttpResult; profile: HttpResult | null };
/** What the "Exchange code" action answers the page. */
export type ExchangeState = { result?: DemoExchange; error?: string };

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    return text.slice(0, 2000);
  }
}

/**
 * What the app's server does with the code: exchange it at the token endpoint, authenticated
 * with HTTP Basic and the PKCE verifier, then call the API with the access token.
 * @see RFC 6749 §4.1.3, §2.3.1; RFC 7636 §4.5
 */
export async function exchangeDemoCode({ code, verifier }: { code: string; verifier: string }): Promise<DemoExchange> {
  const env = getEnv();
  // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined and base64-encoded.
  const basic = Buffer.from(`${encodeURIComponent(DEMO_CLIENT_ID)}:${encodeURIComponent(DEMO_CONFIDENTIAL_SECRET)}`).toString("base64");
  const tokenRes = await fetch(`${env.baseUrl}/oauth/token`, {
    method: "POST",
    headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: demoRedirectUri(), code_verifier: verifier }),
    cache: "no-store",
    signal: AbortSignal.timeout(10_000),
  });
  const token = { status: tokenRes.status, body: await readJson(tokenRes) };
  const accessToken = (token.body as { access_token?: unknown } | null)?.access_token;
  if (!tokenRes.ok || typeof accessToken !== "string") return { token, profile: null };
  const meRes = await fetch(`${env.apiBaseUrl}/athletes/me`, {
    headers: { authorization: `Bearer ${accessToken}`, accept: "application/json" },
    cache: "no-store",
    signal: AbortSignal.timeout(10_000),
  });
  return { token, profile: { status: meRes.status, body: await readJson(meRes) } };
}
