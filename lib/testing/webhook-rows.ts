import { randomBytes } from "node:crypto";
import type { Db } from "../db/client";
import { oauthClients, oauthGrants, webhookSubscriptions } from "../db/schema";
import { seal } from "../crypto/seal";
import { sha256Hex } from "../crypto/random";
import { SUBSCRIBABLE_EVENT_TYPES } from "../events/catalog";

const rand = () => randomBytes(6).toString("hex");

/** Rows for webhook tests, inserted directly: an app, an athlete's grant, a subscription. */
export function webhookRows(db: () => Promise<Db>) {
  return {
    async app(name = "Training Log"): Promise<string> {
      const clientId = `app-${rand()}`;
      await (await db()).insert(oauthClients).values({
        clientId,
        name,
        kind: "confidential",
        secretHash: sha256Hex("x"),
        redirectUris: ["https://log.example.com/cb"],
      });
      return clientId;
    },
    async grant(clientId: string, userId: string, scopes: string[]): Promise<string> {
      const id = `grt_${rand()}`;
      await (await db()).insert(oauthGrants).values({ id, clientId, userId, scopes });
      return id;
    },
    async subscribe(
      clientId: string,
      url: string,
      events: string[] = [...SUBSCRIBABLE_EVENT_TYPES],
      over: Partial<typeof webhookSubscriptions.$inferInsert> = {},
    ): Promise<{ id: string; secret: string }> {
      const id = `whs_${rand()}`;
      const secret = `whsec_${randomBytes(24).toString("base64url")}`;
      await (await db()).insert(webhookSubscriptions).values({ id, clientId, url, events, secretSealed: seal(secret), ...over });
      return { id, secret };
    },
  };
}
