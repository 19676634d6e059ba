import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { sha256Hex } from "../crypto/random";
import { oauthClients } from "../db/schema";
import { DEMO_CONFIDENTIAL_SECRET } from "../db/seed";
import { getEnv } from "../env";
import { decideAuthorization, validateAuthorizationRequest } from "../oauth/authorize";
import { setupApi } from "../testing/fixtures";
import { decodeDemoCookie, demoAuthorizeUrl, encodeDemoCookie, exchangeDemoCode, newDemoFlow } from "./demo-client";

const api = setupApi();

async function seedDemoApp() {
  const db = await api.db();
  await db
    .insert(oauthClients)
    .values({
      clientId: "demo-training-log",
      name: "Demo Training Log",
      kind: "confidential",
      secretHash: sha256Hex(DEMO_CONFIDENTIAL_SECRET),
      redirectUris: ["http://127.0.0.1:8976/callback", `${getEnv().baseUrl}/demo/callback`],
    })
    .onConflictDoNothing();
}

/** The athlete allows the demo app's request; the redirect back carries code, state and iss. */
async function allow(flow: ReturnType<typeof newDemoFlow>, athleteId: string) {
  const params = Object.fromEntries(new URL(demoAuthorizeUrl(flow)).searchParams);
  const step = await decideAuthorization(await api.db(), params, athleteId, "allow");
  expect(step.kind).toBe("redirect");
  return new URL((step as { url: string }).url);
}

describe("the demo app's flow", () => {
  it("makes a 43-character verifier, its S256 challenge and a state (RFC 7636 §4.1, §4.2)", () => {
    const flow = newDemoFlow();
    expect(flow.verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(flow.challenge).toBe(createHash("sha256").update(flow.verifier).digest("base64url"));
    expect(flow.state.length).toBeGreaterThanOrEqual(22);
    expect(newDemoFlow().verifier).not.toBe(flow.verifier);
    expect(decodeDemoCookie(encodeDemoCookie(flow))).toEqual({ state: flow.state, verifier: flow.verifier });
    expect(decodeDemoCookie("garbage")).toBeNull();
    expect(decodeDemoCookie(undefined)).toBeNull();
  });

  it("sends an authorization request the authorization endpoint accepts", async () => {
    await seedDemoApp();
    const flow = newDemoFlow();
    const url = new URL(demoAuthorizeUrl(flow));
    expect(url.origin + url.pathname).toBe(`${getEnv().baseUrl}/oauth/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: "code",
      client_id: "demo-training-log",
      redirect_uri: `${getEnv().baseUrl}/demo/callback`,
      scope: "athlete.read activities.read",
      code_challenge: flow.challenge,
      code_challenge_method: "S256",
      state: flow.state,
      resource: `${getEnv().baseUrl}/v1`,
    });
    expect(url.search).toContain("scope=athlete.read%20activities.read");
    const checked = await validateAuthorizationRequest(await api.db(), Object.fromEntries(url.searchParams), [], null);
    expect(checked.ok).toBe(true);
  });

  it("exchanges the code at the token endpoint and reads the athlete with the access token", async () => {
    await seedDemoApp();
    const athlete = await api.person({ name: "Ava" });
    const flow = newDemoFlow();
    const back = await allow(flow, athlete.id);
    expect(back.origin + back.pathname).toBe(`${getEnv().baseUrl}/demo/callback`);
    expect(back.searchParams.get("state")).toBe(flow.state);
    expect(back.searchParams.get("iss")).toBe(getEnv().baseUrl);

    const { token, profile } = await exchangeDemoCode({ code: back.searchParams.get("code")!, verifier: flow.verifier });
    expect(token.status).toBe(200);
    expect(token.body).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "athlete.read activities.read" });
    expect(profile).toMatchObject({ status: 200, body: { id: athlete.id, name: "Ava" } });
  });

  it("shows the token endpoint's refusal, and calls no API, when the verifier is wrong", async () => {
    await seedDemoApp();
    const athlete = await api.person();
    const flow = newDemoFlow();
    const back = await allow(flow, athlete.id);
    const { token, profile } = await exchangeDemoCode({ code: back.searchParams.get("code")!, verifier: newDemoFlow().verifier });
    expect(token.status).toBe(400);
    expect(token.body).toMatchObject({ error: "invalid_grant" });
    expect(profile).toBeNull();
  });
});
