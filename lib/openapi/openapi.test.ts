import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { validate } from "@readme/openapi-parser";
import { eq } from "drizzle-orm";
import { decodeJwt } from "jose";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { resetEnvForTests } from "../env";
import { sha256Hex } from "../crypto/random";
import { oauthCodes, oauthRefreshTokens } from "../db/schema";
import { decideAuthorization } from "../oauth/authorize";
import { setupApi } from "../testing/fixtures";
import { routeFiles } from "../testing/route-files";
import { openApiDocument } from "./document";
import { DOCS_OAUTH_REDIRECT_PATH } from "./docs-redirect";
import { OPERATIONS } from "./operations";
import { MCP_TOOLS } from "../mcp/tools";
import type { Operation } from "../http/operation";

const api = setupApi();

async function fetchDocument() {
  const res = await fetch(`${api.url}/v1/openapi.json`);
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };
}

/** Validates a real response body against the document's schema for that operation and status. */
async function checkAgainstDocument(doc: object, pathTemplate: string, method: string, res: Response) {
  const type = res.headers.get("content-type")!.split(";")[0]!;
  const pointer = ["paths", pathTemplate, method, "responses", String(res.status), "content", type, "schema"]
    .map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1"))
    .join("/");
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(doc, "openapi");
  const body: unknown = await res.json();
  const ok = ajv.validate({ $ref: `openapi#/${pointer}` }, body);
  expect(ajv.errors ?? [], `${method.toUpperCase()} ${pathTemplate} ${res.status}`).toEqual([]);
  expect(ok).toBe(true);
  return body;
}

describe("/v1/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document, public and cacheable by its caller", async () => {
    const res = await fetch(`${api.url}/v1/openapi.json`);
    expect(res.headers.get("cache-control")).toMatch(/max-age=\d+/);
    const doc = (await res.json()) as { openapi: string };
    expect(doc.openapi).toBe("3.1.0");
    await expect(validate(structuredClone(doc) as never)).resolves.toMatchObject({ valid: true });
  });

  it("describes exactly the operations the route files serve", async () => {
    const served = new Set<Operation>();
    for (const file of routeFiles(path.resolve(__dirname, "../../app/v1"))) {
      const mod = (await import(file)) as Record<string, { operation?: Operation } | undefined>;
      for (const handler of Object.values(mod)) if (handler?.operation) served.add(handler.operation);
    }
    expect(new Set(OPERATIONS)).toEqual(served);
    const doc = openApiDocument(api.url) as unknown as { paths: Record<string, Record<string, unknown>> };
    for (const op of OPERATIONS) expect(doc.paths[op.path]?.[op.method.toLowerCase()], op.operationId).toBeDefined();
  });

  it("lists, for every operation, each problem code it can answer under its status", async () => {
    const doc = await fetchDocument();
    const get = doc.paths["/v1/athletes/{athlete_id}"]!.get as { responses: Record<string, { description: string }> };
    expect(get.responses["401"]!.description).toContain("`token_revoked`");
    expect(get.responses["402"]!.description).toContain("`subscription_required`");
    expect(get.responses["403"]!.description).toContain("`athlete_not_reachable`");
    expect(get.responses["429"]!.description).toContain("`rate_limited`");
  });

  it("lists 400 invalid_request for every operation, those that take nothing too: a request with two Authorization headers is refused before any operation", async () => {
    const doc = await fetchDocument();
    for (const op of OPERATIONS) {
      const responses = (doc.paths[op.path]![op.method.toLowerCase()] as { responses: Record<string, { description: string }> }).responses;
      expect(responses["400"]?.description, op.operationId).toContain("`invalid_request`");
    }
  });

  it("names the rate limits the service is configured with, as its answers' RateLimit-Policy does", async () => {
    const saved = { "15min": process.env.RATE_LIMIT_15MIN, daily: process.env.RATE_LIMIT_DAILY };
    process.env.RATE_LIMIT_15MIN = "45";
    process.env.RATE_LIMIT_DAILY = "1234";
    resetEnvForTests();
    try {
      const res = await fetch(`${api.url}/v1/openapi.json`);
      const text = await res.text();
      const me = await api.call(await api.pat((await api.person()).id), "GET", "/v1/athletes/me");
      const policy = me.headers.get("ratelimit-policy")!;
      expect(policy).toBe('"15min";q=45;w=900, "daily";q=1234;w=86400');
      expect(text).toContain(JSON.stringify(`The windows: \`${policy}\`.`).slice(1, -1));
      expect(text).toContain("45 requests per 15 minutes and 1,234 per day");
      expect(text).not.toMatch(/q=600|q=30000|30,000 per day/);
    } finally {
      for (const [name, value] of [["RATE_LIMIT_15MIN", saved["15min"]], ["RATE_LIMIT_DAILY", saved.daily]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      resetEnvForTests();
    }
  });

  it("starts every JSON body from an example the service takes, as /docs's Try it out sends it", async () => {
    const doc = (await fetchDocument()) as unknown as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { $ref?: string; example?: unknown } }> } }>>;
      components: { schemas: Record<string, { example?: unknown }> };
    };
    const exampleOf = (op: Operation) => {
      const schema = doc.paths[op.path]![op.method.toLowerCase()]!.requestBody!.content["application/json"]!.schema;
      return (schema.$ref ? doc.components.schemas[schema.$ref.split("/").at(-1)!]! : schema).example;
    };
    const json = OPERATIONS.filter((op) => op.body && !op.multipart);
    expect(json.length).toBeGreaterThanOrEqual(5);
    for (const op of json) {
      const example = exampleOf(op);
      expect(example, op.operationId).toBeTypeOf("object");
      expect(op.body!.safeParse(example).error?.issues ?? [], op.operationId).toEqual([]);
    }
    // And the service takes them (a webhook subscription's needs a receiver of the caller's own at its URL).
    const byId = (id: string) => json.find((op) => op.operationId === id)!;
    const token = await api.pat((await api.person()).id);
    const created = await api.call(token, "POST", "/v1/athletes/me/activities", { body: exampleOf(byId("createActivity")) as object });
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const updated = await api.call(token, "PATCH", `/v1/activities/${id}`, { body: exampleOf(byId("updateActivity")) as object });
    expect(updated.status, await updated.clone().text()).toBe(200);
    const metric = await api.call(token, "POST", "/v1/athletes/me/metrics", { body: exampleOf(byId("createMetric")) as object });
    expect(metric.status, await metric.clone().text()).toBe(201);
  });

  it("describes an upload's form as the service reads it: the file and its three fields, nothing else, the optional ones starting empty", async () => {
    const doc = (await fetchDocument()) as unknown as { components: { schemas: Record<string, { additionalProperties?: boolean; required: string[]; properties: Record<string, { example?: unknown }> }> } };
    const form = doc.components.schemas.CreateUploadForm!;
    expect(form.additionalProperties).toBe(false);
    expect(form.required).toEqual(["file"]);
    // Swagger UI fills a form field with its example, else a placeholder ("string", an enum's first value) it would send as the athlete's.
    for (const [name, property] of Object.entries(form.properties)) if (name !== "file") expect(property.example, name).toBe("");
    const person = await api.person();
    const form2 = new FormData();
    form2.append("file", new Blob(["<gpx></gpx>"]), "run.gpx");
    form2.append("description", "not a field of an upload");
    const refused = await fetch(`${api.url}/v1/athletes/me/uploads`, { method: "POST", headers: { authorization: `Bearer ${await api.pat(person.id)}` }, body: form2 });
    expect(refused.status, await refused.clone().text()).toBe(400);
  });

  it("lets /docs's Authorize run the authorization-code flow: PKCE on, and the redirect page it names is served under the reference's policy", async () => {
    const init = await (await fetch(`${api.url}/docs/assets/init.js`)).text();
    expect(init).toContain(`oauth2RedirectUrl: location.origin + "${DOCS_OAUTH_REDIRECT_PATH}"`);
    expect(init).toMatch(/initOAuth\(\{ usePkceWithAuthorizationCodeGrant: true, useBasicAuthenticationWithAccessCodeGrant: true \}\)/);
    const page = await fetch(`${api.url}${DOCS_OAUTH_REDIRECT_PATH}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const script = (await page.text()).match(/<script src="([^"]+)"><\/script>/)![1]!;
    const js = await fetch(new URL(script, `${api.url}${DOCS_OAUTH_REDIRECT_PATH}`));
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toMatch(/^text\/javascript/);
    const { components } = (await fetchDocument()) as unknown as { components: { securitySchemes: { oauth2: { description: string } } } };
    expect(components.securitySchemes.oauth2.description).toContain(`${api.url}${DOCS_OAUTH_REDIRECT_PATH}`);
  });

  it("documents the MCP server, where /mcp's resource metadata sends a reader: each tool by name and scope", async () => {
    const meta = (await (await fetch(`${api.url}/.well-known/oauth-protected-resource/mcp`)).json()) as { resource_documentation: string };
    expect(new URL(meta.resource_documentation).pathname).toBe("/docs");
    expect((await fetch(meta.resource_documentation)).status).toBe(200);
    const { info } = (await fetchDocument()) as unknown as { info: { description: string } };
    for (const tool of MCP_TOOLS) expect(info.description).toContain(`\`${tool.name}\` (\`${tool.scope}\`)`);
    expect(info.description).toContain(`${api.url}/mcp`);
  });

  it("requires WWW-Authenticate on a 403 only where every code of it is insufficient_scope, as the service sends it", async () => {
    const doc = await fetchDocument();
    type Responses = Record<string, { headers?: Record<string, { required?: boolean }> }>;
    const forbidden = (p: string, m: string) => (doc.paths[p]![m] as { responses: Responses }).responses["403"]!.headers!["WWW-Authenticate"]!;
    // getAthlete's 403 is also athlete_not_reachable and client_credentials_not_allowed, sent without one.
    expect(forbidden("/v1/athletes/{athlete_id}", "get").required).not.toBe(true);
    const person = await api.person();
    const other = await api.person();
    const res = await api.call(await api.pat(person.id), "GET", `/v1/athletes/${other.id}`);
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toBeNull();
  });

  it("refuses in its schemas what the service refuses: an empty change, an Idempotency-Key with a space", async () => {
    const doc = (await fetchDocument()) as Record<string, unknown> & { paths: Record<string, Record<string, { parameters?: { name: string; schema: object }[] }>> };
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(doc, "openapi");
    const person = await api.person();
    const token = await api.pat(person.id);
    const created = (await (
      await api.call(token, "POST", "/v1/athletes/me/activities", { body: { name: "Run", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 3000 } })
    ).json()) as { id: string };
    expect(ajv.validate({ $ref: "openapi#/components/schemas/UpdateActivity" }, {})).toBe(false);
    expect((await api.call(token, "PATCH", `/v1/activities/${created.id}`, { body: {} })).status).toBe(400);
    const keySchema = doc.paths["/v1/athletes/me/activities"]!.post!.parameters!.find((p) => p.name === "Idempotency-Key")!.schema;
    for (const [key, status] of [["order 123", 400], ["order-123", 201]] as const) {
      expect(ajv.validate(keySchema, key), key).toBe(status === 201);
      const res = await api.call(token, "POST", "/v1/athletes/me/activities", {
        body: { name: "Run", sport_type: "run", start_local: "2026-03-02T07:30:00", elapsed_time_s: 3000 },
        headers: { "idempotency-key": key },
      });
      expect(res.status, key).toBe(status);
    }
  });

  it("refuses in its schema of a webhook subscription's change what the service refuses, and takes a verify_token alone as it does", async () => {
    const doc = await fetchDocument();
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(doc, "openapi");
    const { token } = await api.app({ name: "Schema hooks" });
    const receiver = http.createServer((req, res) => {
      const challenge = new URL(req.url!, "http://127.0.0.1").searchParams.get("hub.challenge");
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ "hub.challenge": challenge }));
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const allowed = process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS;
    process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
    resetEnvForTests();
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      const created = await api.call(token, "POST", "/v1/app/webhooks", { body: { url, events: ["activity.created"] } });
      expect(created.status, await created.clone().text()).toBe(201);
      const { id } = (await created.json()) as { id: string };
      const changes: [object, number][] = [
        [{}, 400],
        [{ redeliver_failed: false }, 400],
        [{ events: ["activity.created"], redeliver_failed: true }, 400],
        [{ status: "disabled", redeliver_failed: true }, 400],
        [{ verify_token: "kept-for-later" }, 200],
        [{ events: ["activity.updated"] }, 200],
        [{ status: "disabled" }, 200],
        [{ status: "active", redeliver_failed: true }, 200],
      ];
      for (const [change, status] of changes) {
        expect(ajv.validate({ $ref: "openapi#/components/schemas/UpdateWebhookSubscription" }, change), JSON.stringify(change)).toBe(status === 200);
        const res = await api.call(token, "PATCH", `/v1/app/webhooks/${id}`, { body: change });
        expect(res.status, `${JSON.stringify(change)}: ${await res.clone().text()}`).toBe(status);
      }
    } finally {
      process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = allowed;
      if (allowed === undefined) delete process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS;
      resetEnvForTests();
      receiver.closeAllConnections();
      await new Promise((r) => receiver.close(r));
    }
  });

  it("matches real responses: profiles, lists, creations and problems", async () => {
    const doc = await fetchDocument();
    const coach = await api.person();
    const ava = await api.person();
    await api.team(coach.id, [ava.id]);
    const token = await api.pat(ava.id);
    const coachToken = await api.pat(coach.id);

    await checkAgainstDocument(doc, "/v1/athletes/{athlete_id}", "get", await api.call(token, "GET", "/v1/athletes/me"));
    const created = (await checkAgainstDocument(
      doc,
      "/v1/athletes/me/activities",
      "post",
      await api.call(token, "POST", "/v1/athletes/me/activities", {
        body: { name: "Morning run", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 3000, distance_m: 10000 },
      }),
    )) as { id: string };
    await checkAgainstDocument(doc, "/v1/activities/{activity_id}", "get", await api.call(token, "GET", `/v1/activities/${created.id}`));
    await checkAgainstDocument(
      doc,
      "/v1/activities/{activity_id}",
      "patch",
      await api.call(token, "PATCH", `/v1/activities/${created.id}`, { body: { name: "Easy run", max_heart_rate_hz: null } }),
    );
    await checkAgainstDocument(doc, "/v1/athletes/{athlete_id}/activities", "get", await api.call(coachToken, "GET", `/v1/athletes/${ava.id}/activities`));
    await checkAgainstDocument(
      doc,
      "/v1/athletes/me/metrics",
      "post",
      await api.call(token, "POST", "/v1/athletes/me/metrics", { body: { type: "body_mass_kg", value: 58.2, measured_local: "2026-03-01T07:00:00" } }),
    );
    await checkAgainstDocument(doc, "/v1/athletes/{athlete_id}/metrics", "get", await api.call(token, "GET", "/v1/athletes/me/metrics"));
    await checkAgainstDocument(doc, "/v1/teams", "get", await api.call(coachToken, "GET", "/v1/teams"));
    const teams = (await (await api.call(coachToken, "GET", "/v1/teams")).json()) as { data: { id: string }[] };
    await checkAgainstDocument(doc, "/v1/teams/{team_id}/members", "get", await api.call(coachToken, "GET", `/v1/teams/${teams.data[0]!.id}/members`));

    // Problems, one of each family.
    await checkAgainstDocument(doc, "/v1/athletes/{athlete_id}/activities", "get", await api.call(token, "GET", "/v1/athletes/me/activities?start=2026-02-30"));
    await checkAgainstDocument(doc, "/v1/athletes/{athlete_id}", "get", await api.call(null, "GET", "/v1/athletes/me"));
    await checkAgainstDocument(doc, "/v1/athletes/{athlete_id}", "get", await api.call(token, "GET", `/v1/athletes/${coach.id}`));
    await checkAgainstDocument(doc, "/v1/activities/{activity_id}", "get", await api.call(token, "GET", "/v1/activities/act_unknown"));
  });
});

describe("the retry policy in the document's words", () => {
  it("every count of attempts and failures the document names is the policy's (lib/webhooks/policy.ts), so changing it there changes the words", async () => {
    const { DISABLE_AFTER_FAILURES, FAILING_AFTER_FAILURES, MAX_ATTEMPTS } = await import("../webhooks/policy");
    const text = JSON.stringify(openApiDocument("http://localhost:3000"));
    const counts = (re: RegExp) => [...text.matchAll(re)].map((m) => Number(m[1]));
    const attempts = counts(/(\d+) (?:more )?attempts/g);
    const failures = counts(/(\d+) consecutive failures/g);
    const failing = counts(/(?:At |\()(\d+)(?: or more: failing| the subscription is failing)/g);
    expect(attempts.length + failures.length + failing.length).toBeGreaterThanOrEqual(5);
    expect(new Set(attempts)).toEqual(new Set([MAX_ATTEMPTS]));
    expect(new Set(failures)).toEqual(new Set([DISABLE_AFTER_FAILURES]));
    expect(new Set(failing)).toEqual(new Set([FAILING_AFTER_FAILURES]));
  });
});

describe("the authorization server in the document (/oauth/*, /.well-known/*)", () => {
  type Doc = Awaited<ReturnType<typeof fetchDocument>> & { servers: { url: string }[]; components: { schemas: Record<string, unknown> } };
  type Header = { required?: boolean; schema: { const?: string } };
  type DocOperation = { tags: string[]; security?: Record<string, string[]>[]; responses: Record<string, { description: string; headers?: Record<string, Header> }> };
  const operation = (doc: Doc, p: string, method: string) => doc.paths[p]![method] as DocOperation;

  /** Every header the document requires of this answer is sent, with its value where it names one. */
  function checkHeaders(doc: Doc, p: string, method: string, res: Response) {
    const documented = operation(doc, p, method).responses[String(res.status)];
    expect(documented, `${method.toUpperCase()} ${p} ${res.status} is documented`).toBeDefined();
    for (const [name, header] of Object.entries(documented!.headers ?? {})) {
      if (header.required) expect(res.headers.get(name), `${p} ${res.status} ${name}`).not.toBeNull();
      if (header.schema.const !== undefined && res.headers.has(name)) expect(res.headers.get(name), `${p} ${res.status} ${name}`).toBe(header.schema.const);
    }
  }

  /** A real OAuth answer against the document: its status, headers and body. */
  async function checkOAuthAnswer(doc: Doc, p: string, res: Response, method = "post") {
    checkHeaders(doc, p, method, res);
    return (await checkAgainstDocument(doc, p, method, res)) as Record<string, unknown>;
  }

  function formValidator(doc: Doc, schema: string) {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(doc, "openapi");
    return (form: Record<string, string>) => ajv.validate({ $ref: `openapi#/components/schemas/${schema}` }, form);
  }

  const post = (p: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${api.url}${p}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: new URLSearchParams(form).toString() });
  const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}` });

  /** A public client registered over HTTP, as an assistant does, and a code the athlete approved for it. */
  async function publicClientWithCode(doc: Doc) {
    const redirectUri = "http://127.0.0.1:47999/callback";
    const registered = await fetch(`${api.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Doc Assistant", redirect_uris: [redirectUri] }),
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    const { client_id } = (await checkOAuthAnswer(doc, "/oauth/register", registered)) as { client_id: string };
    const person = await api.person();
    const verifier = randomBytes(40).toString("base64url");
    const before = Date.now();
    const step = await decideAuthorization(
      await api.db(),
      {
        client_id,
        redirect_uri: redirectUri,
        response_type: "code",
        scope: "athlete.read activities.read",
        state: "s",
        code_challenge: createHash("sha256").update(verifier).digest("base64url"),
        code_challenge_method: "S256",
        resource: `${api.url}/v1`,
      },
      person.id,
      "allow",
    );
    expect(step.kind).toBe("redirect");
    const code = new URL((step as { url: string }).url).searchParams.get("code")!;
    return { clientId: client_id, redirectUri, verifier, code, before };
  }

  it("places each path where the service serves it (the document's server and the path), one for each route file under app/oauth and app/.well-known", async () => {
    const doc = (await fetchDocument()) as Doc;
    const appDir = path.resolve(__dirname, "../../app");
    const served = [...routeFiles(path.join(appDir, "oauth")), ...routeFiles(path.join(appDir, ".well-known"))].map((f) => `/${path.relative(appDir, path.dirname(f))}`);
    const rootPaths = Object.keys(doc.paths).filter((p) => !p.startsWith("/v1/"));
    expect(new Set(rootPaths)).toEqual(new Set(served));
    for (const p of rootPaths) {
      const item = doc.paths[p] as { servers?: { url: string }[] } & Record<string, unknown>;
      const url = `${(item.servers ?? doc.servers)[0]!.url}${p}`;
      for (const method of Object.keys(item).filter((m) => m !== "servers")) {
        expect(operation(doc, p, method).tags, p).toEqual(["OAuth"]);
        if (method === "get") {
          const res = await fetch(url);
          expect(res.status, url).toBe(200);
          checkHeaders(doc, p, "get", res);
          await checkAgainstDocument(doc, p, "get", res);
        } else {
          // A POST endpoint, asked with GET at the URL the document gives: its documented 405, not a 404 page.
          const res = await fetch(url);
          expect(res.status, url).toBe(405);
          checkHeaders(doc, p, method, res);
          const pointer = `#/paths/${p.replaceAll("/", "~1")}/${method}/responses/405/content/application~1json/schema`;
          const ajv = new Ajv2020({ strict: false });
          addFormats.default(ajv);
          ajv.addSchema(doc, "openapi");
          expect(ajv.validate({ $ref: `openapi${pointer}` }, await res.json()), url).toBe(true);
        }
      }
    }
  });

  it("names the endpoints and client authentication methods the discovery metadata advertises", async () => {
    const doc = (await fetchDocument()) as Doc;
    const meta = (await (await fetch(`${api.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, string> & Record<`${string}_supported`, string[]>;
    for (const [member, method] of [["token_endpoint", "post"], ["revocation_endpoint", "post"], ["registration_endpoint", "post"], ["jwks_uri", "get"]] as const) {
      const url = new URL(meta[member]!);
      expect(`${doc.servers[0]!.url}${url.pathname}`, member).toBe(meta[member]);
      expect(doc.paths[url.pathname]?.[method], member).toBeDefined();
    }
    // The document's client authentication is the methods advertised: HTTP Basic, or none (a public client).
    const schemes = (doc.components as unknown as { securitySchemes: Record<string, { type: string; scheme?: string }> }).securitySchemes;
    for (const [p, member] of [["/oauth/token", "token_endpoint_auth_methods_supported"], ["/oauth/revoke", "revocation_endpoint_auth_methods_supported"]] as const) {
      const methods = operation(doc, p, "post").security!.map((s) => {
        const [name] = Object.keys(s);
        return name === undefined ? "none" : schemes[name]!.scheme === "basic" ? "client_secret_basic" : name;
      });
      expect(new Set(methods), p).toEqual(new Set(meta[member]));
    }
  });

  it("matches the token endpoint's answers for each grant, and the lifetimes it states are the tokens'", async () => {
    const doc = (await fetchDocument()) as Doc;
    const validForm = formValidator(doc, "OAuthTokenRequest");
    const { clientId, redirectUri, verifier, code, before } = await publicClientWithCode(doc);

    const exchange = { grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier, client_id: clientId };
    expect(validForm(exchange)).toBe(true);
    const issued = await post("/oauth/token", exchange);
    expect(issued.status, await issued.clone().text()).toBe(200);
    const tokens = (await checkOAuthAnswer(doc, "/oauth/token", issued)) as { access_token: string; expires_in: number; refresh_token: string; scope: string };
    expect(tokens.scope).toBe("athlete.read activities.read");

    // The lifetimes in the document's words, against what was issued.
    const schemas = doc.components.schemas as Record<string, { properties: Record<string, { description?: string; example?: unknown }> }>;
    const answer = schemas.OAuthTokenResponse!.properties;
    expect(tokens.expires_in).toBe(answer.expires_in!.example);
    const claims = decodeJwt(tokens.access_token);
    expect(claims.exp! - claims.iat!).toBe(answer.expires_in!.example);
    const refreshDays = Number(/valid (\d+) days/.exec(answer.refresh_token!.description!)![1]);
    const db = await api.db();
    const [refreshRow] = await db.select().from(oauthRefreshTokens).where(eq(oauthRefreshTokens.tokenHash, sha256Hex(tokens.refresh_token)));
    expect(Math.round((refreshRow!.expiresAt.getTime() - Date.now()) / 86_400_000)).toBe(refreshDays);
    const codeSeconds = Number(/valid (\d+) seconds/.exec(schemas.OAuthTokenRequest!.properties.code!.description!)![1]);
    const [codeRow] = await db.select().from(oauthCodes).where(eq(oauthCodes.codeHash, sha256Hex(code)));
    expect(Math.round((codeRow!.expiresAt.getTime() - before) / 1000)).toBe(codeSeconds);

    const refresh = { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId };
    expect(validForm(refresh)).toBe(true);
    const refreshed = await post("/oauth/token", refresh);
    expect(refreshed.status, await refreshed.clone().text()).toBe(200);
    expect(await checkOAuthAnswer(doc, "/oauth/token", refreshed)).toHaveProperty("refresh_token");
    // The one used is used up, as the document says: invalid_grant, in the documented error shape.
    const reused = await post("/oauth/token", refresh);
    expect(reused.status).toBe(400);
    expect(await checkOAuthAnswer(doc, "/oauth/token", reused)).toMatchObject({ error: "invalid_grant" });

    const app = await api.app({ name: "Doc confidential" });
    expect(validForm({ grant_type: "client_credentials" })).toBe(true);
    const appToken = await post("/oauth/token", { grant_type: "client_credentials" }, basic(app.clientId, app.secret));
    expect(appToken.status, await appToken.clone().text()).toBe(200);
    const appTokens = await checkOAuthAnswer(doc, "/oauth/token", appToken);
    expect(appTokens).not.toHaveProperty("refresh_token");
    expect(appTokens).not.toHaveProperty("scope");
    const publicCredentials = await post("/oauth/token", { grant_type: "client_credentials", client_id: clientId });
    expect(publicCredentials.status).toBe(400);
    expect(await checkOAuthAnswer(doc, "/oauth/token", publicCredentials)).toMatchObject({ error: "unauthorized_client" });
  });

  it("refuses in its form what the token endpoint refuses, and documents its refusals: invalid_client with a Basic challenge only after Basic, slow_down with Retry-After", async () => {
    const doc = (await fetchDocument()) as Doc;
    const validForm = formValidator(doc, "OAuthTokenRequest");
    const { clientId, redirectUri, verifier, code } = await publicClientWithCode(doc);
    for (const missing of ["code_verifier", "redirect_uri", "code"]) {
      const form: Record<string, string> = { grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier, client_id: clientId };
      delete form[missing];
      expect(validForm(form), missing).toBe(false);
      const res = await post("/oauth/token", form);
      expect(res.status, missing).toBe(400);
      expect(await checkOAuthAnswer(doc, "/oauth/token", res), missing).toMatchObject({ error: "invalid_request" });
    }
    expect(validForm({ grant_type: "password", username: "a", password: "b" })).toBe(false);
    const password = await post("/oauth/token", { grant_type: "password", client_id: clientId });
    expect(await checkOAuthAnswer(doc, "/oauth/token", password)).toMatchObject({ error: "unsupported_grant_type" });

    const app = await api.app({ name: "Doc refusals" });
    const wrongSecret = await post("/oauth/token", { grant_type: "client_credentials" }, basic(app.clientId, "aas_cs_wrong"));
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.headers.get("www-authenticate")).toMatch(/^Basic realm=/);
    expect(await checkOAuthAnswer(doc, "/oauth/token", wrongSecret)).toMatchObject({ error: "invalid_client" });
    // client_secret_post is not accepted, and a browser is not shown a password prompt for it.
    const secretInBody = await post("/oauth/token", { grant_type: "client_credentials", client_id: app.clientId, client_secret: app.secret });
    expect(secretInBody.status).toBe(401);
    expect(secretInBody.headers.get("www-authenticate")).toBeNull();
    expect(await checkOAuthAnswer(doc, "/oauth/token", secretInBody)).toMatchObject({ error: "invalid_client" });
    expect(operation(doc, "/oauth/token", "post").responses["401"]!.headers!["WWW-Authenticate"]!.required).not.toBe(true);

    const saved = process.env.RATE_LIMIT_OAUTH_TOKEN;
    process.env.RATE_LIMIT_OAUTH_TOKEN = "5";
    resetEnvForTests();
    try {
      const limited = (await fetchDocument()) as Doc;
      expect(operation(limited, "/oauth/token", "post").responses["429"]!.description).toContain("More than 5 requests a minute");
      let res: Response | undefined;
      for (let i = 0; i < 7 && res?.status !== 429; i++) res = await post("/oauth/token", { grant_type: "client_credentials" }, basic(app.clientId, "aas_cs_wrong"));
      expect(res!.status).toBe(429);
      expect(Number(res!.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await checkOAuthAnswer(limited, "/oauth/token", res!)).toMatchObject({ error: "slow_down" });
    } finally {
      if (saved === undefined) delete process.env.RATE_LIMIT_OAUTH_TOKEN;
      else process.env.RATE_LIMIT_OAUTH_TOKEN = saved;
      resetEnvForTests();
    }
  });

  it("matches the revocation endpoint's answers: 200 with no body, a refusal for a client-credentials token", async () => {
    const doc = (await fetchDocument()) as Doc;
    const validForm = formValidator(doc, "OAuthRevocationRequest");
    const { clientId, redirectUri, verifier, code } = await publicClientWithCode(doc);
    const issued = await post("/oauth/token", { grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier, client_id: clientId });
    const { refresh_token } = (await issued.json()) as { refresh_token: string };

    const form = { token: refresh_token, client_id: clientId };
    expect(validForm(form)).toBe(true);
    const revoked = await post("/oauth/revoke", form);
    expect(revoked.status).toBe(200);
    checkHeaders(doc, "/oauth/revoke", "post", revoked);
    expect(operation(doc, "/oauth/revoke", "post").responses["200"]).not.toHaveProperty("content");
    expect(await revoked.text()).toBe("");
    const refused = await post("/oauth/token", { grant_type: "refresh_token", refresh_token, client_id: clientId });
    expect(await checkOAuthAnswer(doc, "/oauth/token", refused)).toMatchObject({ error: "invalid_grant" });

    expect(validForm({ client_id: clientId })).toBe(false);
    const noToken = await post("/oauth/revoke", { client_id: clientId });
    expect(await checkOAuthAnswer(doc, "/oauth/revoke", noToken)).toMatchObject({ error: "invalid_request" });
    const app = await api.app({ name: "Doc revocation" });
    const appToken = await post("/oauth/revoke", { token: app.token }, basic(app.clientId, app.secret));
    expect(appToken.status).toBe(400);
    expect(await checkOAuthAnswer(doc, "/oauth/revoke", appToken)).toMatchObject({ error: "unsupported_token_type" });
  });

  it("refuses in its registration schema what registration refuses", async () => {
    const doc = (await fetchDocument()) as Doc;
    const valid = formValidator(doc, "OAuthClientRegistrationRequest") as (body: object) => boolean;
    const cases: [object, string][] = [
      [{ client_name: "Many", redirect_uris: Array.from({ length: 11 }, (_, i) => `https://x.example/cb${i}`) }, "invalid_redirect_uri"],
      [{ client_name: "None", redirect_uris: [] }, "invalid_redirect_uri"],
      [{ client_name: "Secret", redirect_uris: ["https://x.example/cb"], token_endpoint_auth_method: "client_secret_basic" }, "invalid_client_metadata"],
      [{ client_name: "Machine", redirect_uris: ["https://x.example/cb"], grant_types: ["client_credentials"] }, "invalid_client_metadata"],
    ];
    for (const [body, error] of cases) {
      expect(valid(body), JSON.stringify(body)).toBe(false);
      const res = await fetch(`${api.url}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await checkOAuthAnswer(doc, "/oauth/register", res), JSON.stringify(body)).toMatchObject({ error });
    }
  });
});

describe("POST at /v1/athletes/{athlete_id}/… (the caller's own id)", () => {
  it("is documented wherever a route serves the /me write at the {athlete_id} path too", async () => {
    const doc = await fetchDocument();
    const dir = path.resolve(__dirname, "../../app/v1/athletes/[athlete_id]");
    let found = 0;
    for (const file of routeFiles(dir)) {
      const mod = (await import(file)) as Record<string, { operation?: Operation } | undefined>;
      for (const handler of Object.values(mod)) {
        const op = handler?.operation;
        if (!op?.path.startsWith("/v1/athletes/me/")) continue;
        found++;
        const byId = op.path.replace("/v1/athletes/me/", "/v1/athletes/{athlete_id}/");
        const documented = doc.paths[byId]?.[op.method.toLowerCase()] as { responses: Record<string, { description: string }> } | undefined;
        expect(documented, `${op.method} ${byId}`).toBeDefined();
        expect(documented!.responses["403"]!.description, byId).toContain("`athlete_not_reachable`");
      }
    }
    expect(found).toBeGreaterThanOrEqual(3);
  });

  it("matches the answers: the athlete's own id records, another id (their coach's) is 403 athlete_not_reachable", async () => {
    const doc = await fetchDocument();
    const coach = await api.person();
    const ava = await api.person();
    await api.team(coach.id, [ava.id]);
    const token = await api.pat(ava.id);
    const coachToken = await api.pat(coach.id);
    const activity = { name: "Own id run", sport_type: "run", start_local: "2026-04-01T07:30:00", elapsed_time_s: 1800 };
    const metric = { type: "body_mass_kg", value: 58.2, measured_local: "2026-04-01T07:00:00" };
    for (const [kind, body] of [["activities", activity], ["metrics", metric]] as const) {
      const own = await api.call(token, "POST", `/v1/athletes/${ava.id}/${kind}`, { body });
      expect(own.status, await own.clone().text()).toBe(201);
      await checkAgainstDocument(doc, `/v1/athletes/{athlete_id}/${kind}`, "post", own);
      const other = await api.call(coachToken, "POST", `/v1/athletes/${ava.id}/${kind}`, { body });
      expect(other.status).toBe(403);
      expect(await checkAgainstDocument(doc, `/v1/athletes/{athlete_id}/${kind}`, "post", other)).toMatchObject({ code: "athlete_not_reachable" });
    }
    const upload = (who: string) => {
      const form = new FormData();
      form.append("file", new Blob(["<gpx></gpx>"]), "run.gpx");
      return fetch(`${api.url}/v1/athletes/${ava.id}/uploads`, { method: "POST", headers: { authorization: `Bearer ${who}` }, body: form });
    };
    const own = await upload(token);
    expect(own.status, await own.clone().text()).toBe(202);
    await checkAgainstDocument(doc, "/v1/athletes/{athlete_id}/uploads", "post", own);
    const other = await upload(coachToken);
    expect(other.status).toBe(403);
    expect(await checkAgainstDocument(doc, "/v1/athletes/{athlete_id}/uploads", "post", other)).toMatchObject({ code: "athlete_not_reachable" });
  });
});
