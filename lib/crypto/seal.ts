import "server-only";
import { persistentSecret } from "../secrets";
import { sealWith, unsealWith } from "./aead";

function secret(): string {
  return process.env.SECRETS_KEY || persistentSecret("SECRETS_KEY");
}

/** AES-256-GCM: secrets the service must use again (webhook signing secrets) rest sealed. */
export function seal(plaintext: string): string {
  return sealWith(secret(), plaintext);
}

export function unseal(sealed: string): string {
  return unsealWith(secret(), sealed);
}
