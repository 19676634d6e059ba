import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { authorizeLink, signUpNewPerson } from "./helpers";

// An athlete connects an assistant that the service has never seen: it names itself by a
// Client ID Metadata Document served from this machine (the demo service allows loopback
// addresses), the consent screen shows its name and host and that it was not reviewed, the
// athlete allows read access for the MCP server, and later disconnects it on /settings/apps.

async function assistant() {
  const callbacks: URLSearchParams[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname === "/assistant.json") {
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({ client_id: `${origin}/assistant.json`, client_name: "Pocket Coach", redirect_uris: [`${origin}/callback`], token_endpoint_auth_method: "none" }),
      );
      return;
    }
    // Only the redirect back counts (the browser also asks this host for /favicon.ico).
    if (url.pathname === "/callback") callbacks.push(url.searchParams);
    res.writeHead(200, { "content-type": "text/html" }).end("<title>Pocket Coach</title><p>Connected. You can close this window.</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, clientId: `${origin}/assistant.json`, redirectUri: `${origin}/callback`, callbacks, close: () => new Promise<void>((r) => server.close(() => r())) };
}

test("an athlete connects an assistant, sees its name and host on the consent screen, allows read access, and disconnects it", async ({ browser, baseURL }) => {
  const a = await assistant();
  try {
    const { page, context } = await signUpNewPerson(browser, "Iris");
    const link = authorizeLink(a.clientId, a.redirectUri, ["athlete.read", "activities.read", "metrics.read", "teams.read"], {
      state: "mcp-journey",
      resource: `${baseURL}/mcp`,
    });
    await page.goto(link.url);
    const host = new URL(a.origin).host;
    await expect(page.getByRole("heading", { name: `Pocket Coach, from ${host}, wants to access your account as an assistant` })).toBeVisible();
    await expect(page.getByRole("note")).toContainText("has not reviewed it");
    await expect(page.getByRole("list", { name: "Requested permissions" }).getByRole("listitem")).toHaveCount(4);
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL((u) => u.href.startsWith(`${a.redirectUri}?`));
    const back = a.callbacks.at(-1)!;
    expect(back.get("state")).toBe("mcp-journey");
    const token = await page.request.post("/oauth/token", {
      form: { grant_type: "authorization_code", client_id: a.clientId, code: back.get("code")!, code_verifier: link.verifier, redirect_uri: a.redirectUri },
    });
    expect(token.status(), await token.text()).toBe(200);
    const { access_token } = (await token.json()) as { access_token: string };
    const tools = await page.request.post("/mcp", {
      headers: { authorization: `Bearer ${access_token}`, accept: "application/json, text/event-stream" },
      data: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    });
    expect(tools.status()).toBe(200);

    await page.goto("/settings/apps");
    const card = page.getByRole("listitem", { name: "Pocket Coach" });
    await expect(card.getByRole("heading", { name: `Pocket Coach from ${host}` })).toBeVisible();
    await expect(card).toContainText("Last used");
    await card.getByRole("button", { name: "Disconnect" }).click();
    await expect(page.getByText("Disconnected Pocket Coach.")).toBeVisible();
    await expect(page.getByRole("listitem", { name: "Pocket Coach" })).toHaveCount(0);
    const after = await page.request.post("/mcp", {
      headers: { authorization: `Bearer ${access_token}`, accept: "application/json, text/event-stream" },
      data: { jsonrpc: "2.0", id: 2, method: "tools/list" },
    });
    expect(after.status()).toBe(401);
    await context.close();
  } finally {
    await a.close();
  }
});

test("a self-registered client that sends the athlete back to a host other than the one it is named by says so on the consent screen", async ({ browser, baseURL, request }) => {
  // RFC 7591 registration: the client is named by its first redirect URI's host (CONTRACT §12).
  const registered = await request.post("/oauth/register", {
    data: { client_name: "Look-alike", redirect_uris: ["https://trusted.example/cb", "https://elsewhere.example/cb"] },
  });
  expect(registered.status(), await registered.text()).toBe(201);
  const { client_id } = (await registered.json()) as { client_id: string };
  const { page, context } = await signUpNewPerson(browser, "Ines");
  try {
    await page.goto(authorizeLink(client_id, "https://elsewhere.example/cb", ["activities.read"], { resource: `${baseURL}/mcp` }).url);
    await expect(page.getByRole("heading", { name: "Look-alike, from trusted.example, wants to access your account as an assistant" })).toBeVisible();
    const note = page.getByRole("note");
    await expect(note).toContainText("has not reviewed it");
    await expect(note).toContainText("to elsewhere.example, not to trusted.example");
    // Sent back to the host it is named by, the screen has nothing more to say.
    await page.goto(authorizeLink(client_id, "https://trusted.example/cb", ["activities.read"], { resource: `${baseURL}/mcp` }).url);
    await expect(page.getByRole("note")).toContainText("has not reviewed it");
    await expect(page.getByRole("note")).not.toContainText("not to trusted.example");
  } finally {
    await context.close();
  }
});
