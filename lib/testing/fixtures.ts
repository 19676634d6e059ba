import { afterAll, beforeAll, expect } from "vitest";
import { inWriteCtx } from "../http/operation";
import { ApiError } from "../http/errors";
import { randomBytes } from "node:crypto";
import { getDb, type Db } from "../db/client";
import { athleteProfiles, oauthClients, teamMemberships, teams } from "../db/schema";
import { sha256Hex } from "../crypto/random";
import { signUp } from "../people/people";
import { createPersonalAccessToken } from "../tokens/personal-access-tokens";
import { newId } from "../ids";
import type { Scope } from "../auth/scopes";
import { SCOPE_NAMES } from "../auth/scopes";
import { createTestDatabase } from "./db";
import { startTestServer } from "./server";
import { expectWireShape } from "./wire-shape";

export type Api = {
  url: string;
  db: () => Promise<Db>;
  person: (opts?: PersonOpts) => Promise<{ id: string; email: string }>;
  pat: (userId: string, scopes?: readonly Scope[], expiresInDays?: 7 | 30 | 90 | 365 | null) => Promise<string>;
  team: (coachId: string, members: string[], opts?: { name?: string; memberStatus?: "active" | "invited" }) => Promise<string>;
  /** A request to the test server; a successful `/v1` answer must be exactly its operation's schema (`expectWireShape`). */
  call: (token: string | null, method: string, path: string, init?: { body?: unknown; headers?: Record<string, string> }) => Promise<Response>;
  /**
   * A confidential app (owned by a new person) and a client-credentials token from
   * POST /oauth/token with HTTP Basic, as an app gets one, under the settings of the moment.
   */
  app: (opts?: { name?: string }) => Promise<{ clientId: string; secret: string; ownerId: string; token: string }>;
  /** `{ ctx }` for a domain verb called as a signed-in person (the console's actor). */
  as: (userId: string) => Promise<{ ctx: { db: Db; actor: { kind: "session"; userId: string } } }>;
};

type PersonOpts = {
  email?: string;
  name?: string;
  timezone?: string;
  billing?: "subscribed" | "trial" | "expired";
};

/** One database and one HTTP server per test file, with builders for the data tests need. */
export function setupApi(): Api {
  let close: (() => Promise<void>) | undefined;
  let drop: (() => Promise<void>) | undefined;
  const api: Api = {
    url: "",
    db: () => getDb(),
    async person(opts = {}) {
      const db = await getDb();
      const email = opts.email ?? `p-${randomBytes(5).toString("hex")}@example.test`;
      const billing = opts.billing ?? "subscribed";
      return signUp(db, { email, name: opts.name ?? email.split("@")[0]!, password: "correct horse battery" }, {
        timezone: opts.timezone ?? "Europe/Oslo",
        hasSubscription: billing === "subscribed",
        trialEndsAt:
          billing === "trial" ? new Date(Date.now() + 14 * 86_400_000) : billing === "expired" ? new Date(Date.now() - 86_400_000) : null,
      });
    },
    async pat(userId, scopes = SCOPE_NAMES, expiresInDays = null) {
      const { token } = await inWriteCtx({ db: await getDb(), actor: { kind: "session", userId } }, (ctx) => createPersonalAccessToken({ ctx, input: { name: "test", scopes: [...scopes], expires_in_days: expiresInDays } }));
      return token;
    },
    async team(coachId, members, opts = {}) {
      const db = await getDb();
      const id = newId("team");
      await db.insert(teams).values({ id, name: opts.name ?? "Team", createdBy: coachId });
      await db.insert(teamMemberships).values([
        { teamId: id, userId: coachId, role: "coach", status: "active", joinedAt: new Date() },
        ...members.map((userId) => ({
          teamId: id,
          userId,
          role: "athlete" as const,
          status: opts.memberStatus ?? ("active" as const),
          joinedAt: opts.memberStatus === "invited" ? null : new Date(),
        })),
      ]);
      return id;
    },
    async app(opts = {}) {
      const owner = await api.person();
      const clientId = `app-${randomBytes(5).toString("hex")}`;
      const secret = `aas_cs_${randomBytes(16).toString("hex")}`;
      await (await getDb()).insert(oauthClients).values({
        clientId,
        ownerId: owner.id,
        name: opts.name ?? "Test App",
        kind: "confidential",
        secretHash: sha256Hex(secret),
        redirectUris: ["https://app.example.com/cb"],
      });
      const res = await fetch(`${api.url}/oauth/token`, {
        method: "POST",
        headers: { authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials",
      });
      expect(res.status, await res.clone().text()).toBe(200);
      const { access_token } = (await res.json()) as { access_token: string };
      return { clientId, secret, ownerId: owner.id, token: access_token };
    },
    async as(userId) {
      return { ctx: { db: await getDb(), actor: { kind: "session" as const, userId } } };
    },
    async call(token, method, path, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      if (token) headers.authorization = `Bearer ${token}`;
      let body: string | undefined;
      if (init.body !== undefined) {
        body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
        headers["content-type"] ??= "application/json";
      }
      const res = await fetch(api.url + path, { method, headers, body });
      await expectWireShape(method, path, res);
      return res;
    },
  };
  beforeAll(async () => {
    const handle = await createTestDatabase();
    drop = handle.drop;
    const server = await startTestServer();
    api.url = server.url;
    close = server.close;
  });
  afterAll(async () => {
    await close?.();
    await drop?.();
  });
  return api;
}

export async function setBilling(db: Db, userId: string, set: Partial<typeof athleteProfiles.$inferInsert>) {
  const { eq } = await import("drizzle-orm");
  await db.update(athleteProfiles).set(set).where(eq(athleteProfiles.userId, userId));
}

/** The ApiError a domain verb refused with; fails the test if it did not refuse. */
export async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}
