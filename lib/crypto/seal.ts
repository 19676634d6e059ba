import "server-only";
import { persistentSecret } from "../secrets";
import { sealWith, unsealWith } from "./aead";

function secret(): string {
  return process.env.SECRETS_KEY || persistentSecret("SECRETS_KEY");
}

/** AES-256-GCM: what the service must use again rests sealed (webhook signing secrets, the token signing key, stored Idempotency-Key answers). */
export function seal(plaintext: string): string {
  return sealWith(secret(), plaintext);
}

export function unseal(sealed: string): string {
  return unsealWith(secret(), sealed);
}
