"use server";

import { cookies } from "next/headers";
import { safeEqual } from "@/lib/crypto/random";
import { getEnv } from "@/lib/env";
import { DEMO_COOKIE, DEMO_COOKIE_PATH, decodeDemoCookie, exchangeDemoCode, type ExchangeState } from "@/lib/demo-client/demo-client";

/**
 * "Exchange code": the demo app's server redeems the code with the verifier this browser's
 * cookie holds, after checking the state and the issuer it came back with. Codes are single
 * use, so the cookie goes whatever the answer.
 */
export async function exchangeCodeAction(_prev: ExchangeState, form: FormData): Promise<ExchangeState> {
  const code = form.get("code");
  const state = form.get("state");
  const jar = await cookies();
  const flow = decodeDemoCookie(jar.get(DEMO_COOKIE)?.value);
  if (typeof code !== "string" || !code) return { error: "There is no code to exchange." };
  if (!flow) return { error: "This browser holds no PKCE verifier for this flow (the cookie expired or the flow began elsewhere). Start the demo again." };
  if (typeof state !== "string" || !safeEqual(state, flow.state)) {
    return { error: "The state does not match the one this browser sent, so the response may be forged (RFC 6749 §10.12). Start the demo again." };
  }
  // RFC 9207 §2.4: a server that advertises `iss` in its responses must be checked by it (a mix-up attack names another issuer).
  if (form.get("iss") !== getEnv().baseUrl) {
    return { error: `The response names the issuer ${JSON.stringify(form.get("iss") ?? "")}, not this service (${getEnv().baseUrl}), so it may come from another server (RFC 9207). Start the demo again.` };
  }
  jar.delete({ name: DEMO_COOKIE, path: DEMO_COOKIE_PATH });
  try {
    return { result: await exchangeDemoCode({ code, verifier: flow.verifier }) };
  } catch (err) {
    return { error: `The token endpoint could not be reached: ${err instanceof Error ? err.message : String(err)}` };
  }
}
