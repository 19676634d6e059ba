import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../db/client";
import { signingKeys, webhookSubscriptions } from "../db/schema";
import { resetKeyCacheForTests, sealPrivateJwk, signingKey } from "../oauth/keys";
import { createTestDatabase } from "../testing/db";
import { webhookRows } from "../testing/webhook-rows";
import { assertSecretsKeyOpensStored, SecretsKeyMismatch } from "./sealed-at-rest";

let db: Db;
let drop: () => Promise<void>;
const saved = process.env.SECRETS_KEY;
const KEY = "the-key-it-was-sealed-with";

beforeAll(async () => {
  process.env.SECRETS_KEY = KEY;
  ({ db, drop } = await createTestDatabase());
});
afterEach(async () => {
  process.env.SECRETS_KEY = KEY;
  await db.delete(webhookSubscriptions);
  await db.delete(signingKeys);
  resetKeyCacheForTests();
});
afterAll(async () => {
  if (saved === undefined) delete process.env.SECRETS_KEY;
  else process.env.SECRETS_KEY = saved;
  await drop();
});

describe("start-up check that SECRETS_KEY opens what the database holds sealed", () => {
  it("a database with nothing sealed passes under any key", async () => {
    process.env.SECRETS_KEY = "any-other-key-at-all";
    await expect(assertSecretsKeyOpensStored(db)).resolves.toBeUndefined();
  });

  it("the token signing key sealed with another key: refused, naming SECRETS_KEY and what it cannot open", async () => {
    await signingKey(db);
    await expect(assertSecretsKeyOpensStored(db)).resolves.toBeUndefined();
    process.env.SECRETS_KEY = "a-different-key-entirely";
    const err = await assertSecretsKeyOpensStored(db).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SecretsKeyMismatch);
    expect((err as Error).message).toMatch(/^SECRETS_KEY cannot open the token signing key/);
  });

  it("checks the key the service signs with (the oldest not retired), not another row", async () => {
    await signingKey(db);
    // A later key, retired, sealed under a key long gone: not the one in use, so no reason to stop.
    process.env.SECRETS_KEY = "an-other-key-long-gone";
    await db.insert(signingKeys).values({ kid: "later", alg: "ES256", privateJwk: sealPrivateJwk({ kty: "EC" }), publicJwk: {}, createdAt: new Date(Date.now() + 60_000), retiredAt: new Date() });
    process.env.SECRETS_KEY = KEY;
    await expect(assertSecretsKeyOpensStored(db)).resolves.toBeUndefined();
  });

  it("a webhook signing secret sealed with another key: refused", async () => {
    const rows = webhookRows(async () => db);
    await rows.subscribe(await rows.app(), "https://log.example.com/hook");
    await expect(assertSecretsKeyOpensStored(db)).resolves.toBeUndefined();
    process.env.SECRETS_KEY = "a-different-key-entirely";
    await expect(assertSecretsKeyOpensStored(db)).rejects.toThrow(/webhook signing secrets/);
  });

  it("a signing key stored before keys were sealed (a plain JWK) is not taken for a mismatch", async () => {
    await db.insert(signingKeys).values({ kid: "plain", alg: "ES256", privateJwk: { kty: "EC", crv: "P-256", d: "x", x: "y", y: "z" }, publicJwk: {} });
    process.env.SECRETS_KEY = "a-different-key-entirely";
    await expect(assertSecretsKeyOpensStored(db)).resolves.toBeUndefined();
  });
});
