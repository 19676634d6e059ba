// GET /demo/start: the demo app begins an authorization: PKCE verifier and state into a cookie, then off to /oauth/authorize.
import { NextResponse } from "next/server";
import { DEMO_COOKIE, demoAuthorizeUrl, demoCookieOptions, encodeDemoCookie, newDemoFlow } from "@/lib/demo-client/demo-client";

export function GET(): Response {
  const flow = newDemoFlow();
  const res = NextResponse.redirect(demoAuthorizeUrl(flow), 303);
  res.cookies.set(DEMO_COOKIE, encodeDemoCookie(flow), demoCookieOptions());
  res.headers.set("Cache-Control", "no-store");
  return res;
}
