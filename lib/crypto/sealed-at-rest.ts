import "server-only";
import { asc, desc, isNull, sql } from "drizzle-orm";
import { DatabaseRefused, type Db } from "../db/client";
import { signingKeys, webhookSubscriptions } from "../db/schema";
import { unseal } from "./seal";

/** The service's SECRETS_KEY cannot open what its database holds sealed: waiting would not change that. */
export class SecretsKeyMismatch extends DatabaseRefused {
  constructor(what: string) {
    super(
      `SECRETS_KEY cannot open the ${what} this database holds sealed: it is not the key they were sealed with. ` +
        "Start the service with the SECRETS_KEY it had (with none set, the one in DATA_DIR/secrets.json of the instance that sealed them); " +
        "a new key cannot open what the old one sealed.",
    );
    this.name = "SecretsKeyMismatch";
  }
}

function opens(sealed: string): boolean {
  try {
    unseal(sealed);
    return true;
  } catch {
    return false;
  }
}

/**
 * At start-up: the token signing key in use and the newest webhook signing secret open with this
 * process's SECRETS_KEY. A different key (another instance's, a lost `secrets.json`) would
 * otherwise be found only at first use: a 500 for every token request and every delivery.
 * A database with nothing sealed yet passes. Two reads by primary key or a small table's newest row.
 */
export async function assertSecretsKeyOpensStored(db: Db): Promise<void> {
  // The key the service signs with (lib/oauth/keys.ts: the oldest not retired).
  const [key] = await db
    .select({ sealed: sql<string | null>`${signingKeys.privateJwk}->>'sealed'` })
    .from(signingKeys)
    .where(isNull(signingKeys.retiredAt))
    .orderBy(asc(signingKeys.createdAt))
    .limit(1);
  if (key?.sealed && !opens(key.sealed)) throw new SecretsKeyMismatch("token signing key");
  const [subscription] = await db
    .select({ sealed: webhookSubscriptions.secretSealed })
    .from(webhookSubscriptions)
    .orderBy(desc(webhookSubscriptions.createdAt))
    .limit(1);
  if (subscription && !opens(subscription.sealed)) throw new SecretsKeyMismatch("webhook signing secrets");
}
