import { z } from "zod";
import { Instant } from "../http/schemas";

/** An app the athlete has authorized, as the console shows it. */
export const ConnectedApp = z.object({
  grant_id: z.string(),
  client_id: z.string(),
  name: z.string(),
  logo_url: z.string().nullable(),
  homepage_url: z.string().nullable(),
  scopes: z.array(z.object({ name: z.string(), plain: z.string() })),
  /** When the athlete first authorized it. */
  authorized_at: Instant,
  /** When the authorization last changed (more scopes approved). */
  updated_at: Instant,
  /** The last request made with its tokens, to the minute; null if none yet. */
  last_used_at: Instant.nullable(),
  /** `app`: registered by a developer here; `assistant`: a client that registered itself (a metadata document or RFC 7591), not reviewed. */
  kind: z.enum(["app", "assistant"]),
  /** Where an assistant comes from (its metadata document's host, or its redirect URI's); null for apps. */
  host: z.string().nullable(),
});
export type ConnectedApp = z.output<typeof ConnectedApp>;

/** The answer to disconnecting an app: which authorization ended, and when. */
export const DisconnectedApp = z.object({ grant_id: z.string(), client_id: z.string(), revoked_at: Instant });
export type DisconnectedApp = z.output<typeof DisconnectedApp>;
