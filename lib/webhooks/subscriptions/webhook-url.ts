import "server-only";
import dns from "node:dns/promises";
import net from "node:net";
import { z } from "zod";
import { ApiError } from "../../http/errors";
import { addressRefusal, mayConnectTo, nameRefusal } from "../outbound";
import { hasHiddenCharacters } from "../../text";
import { allowPrivateNetworks } from "./owned-subscription";
import { CreateSubscriptionInput, UpdateSubscriptionInput } from "./schemas";

export const MAX_WEBHOOK_URL_LENGTH = 2000;

/**
 * Why `raw` cannot be a subscription URL, or null. `https://` only and no loopback or private
 * IP literal unless private networks are allowed (then `http://` too), and never a link-local
 * or cloud metadata one (outbound.ts, `mayConnectTo`); no credentials, no
 * fragment, no control, bidi or zero-width characters, at most 2000 characters as given and as
 * requested (percent-encoded). Host names are checked by `checkWebhookUrl`.
 */
export function webhookUrlProblem(raw: string, allowPrivate: boolean): string | null {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  // Shown as given in the console and the API: a bidi override would make it read as another
  // address. A URL holds them only percent-encoded.
  if (hasHiddenCharacters(raw, { strict: true })) return "must not hold control, bidi or zero-width characters (percent-encode them)";
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return "must be an absolute URL";
  }
  const schemes = allowPrivate ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(u.protocol)) return allowPrivate ? "must be an http:// or https:// URL" : "must be an https:// URL";
  if (u.username || u.password) return "must not carry credentials (user:password@)";
  if (raw.includes("#")) return "must not have a fragment";
  // Kept and called as requested (`requestedUrl`): that form, percent-encoded, is what is limited too.
  if (u.href.length > MAX_WEBHOOK_URL_LENGTH) return `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters as it is requested, percent-encoded (${u.href.length})`;
  const host = u.hostname.replace(/^\[|\]$/g, "");
  if (!host) return "must name a host";
  if (net.isIP(host) && !mayConnectTo(host, allowPrivate)) return addressRefusal(host);
  return null;
}

function invalid(detail: string): ApiError {
  return new ApiError("invalid_webhook_url", `url ${detail}.`, { errors: [{ field: "url", code: "invalid_webhook_url", detail }] });
}

/**
 * Throws 400 `invalid_webhook_url` (field `url`) unless `raw` is allowed. A host name that
 * resolves only to non-public addresses is refused here too, for a clear answer; the
 * authoritative check is the one made at connection time for every request (outbound.ts),
 * since a name can be re-pointed after this lookup. A name that does not resolve at all is
 * left to the handshake, which reports it.
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<string> {
  const problem = webhookUrlProblem(raw, allowPrivate);
  if (problem) throw invalid(problem);
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, "");
  if (!net.isIP(host)) {
    const addresses = await dns.lookup(host, { all: true }).catch(() => null);
    if (addresses?.length && !addresses.some((a) => mayConnectTo(a.address, allowPrivate))) throw invalid(nameRefusal(host, addresses));
  }
  return requestedUrl(raw);
}

/**
 * The URL as it is requested, which is what a subscription keeps and shows: `HTTP://Host:443`,
 * `http://0x7f.1/hook` or a path with a backslash or a space are called as
 * `https://host/`, `http://127.0.0.1/hook`, `/back` and `/h%20ook`, so the developer sees the
 * address that is called. Text that is no URL is returned as it is (the check refuses it).
 */
export function requestedUrl(raw: string): string {
  try {
    return new URL(raw).href;
  } catch {
    return raw;
  }
}

/**
 * `schema`, a subscription's body, with the URL's problem (`webhookUrlProblem`) said in the same
 * 400 as the body's others: the verbs check the URL only once the body is valid, so a body with
 * no events and a 3,000-character URL was refused for its events, and only once they were
 * fixed for its URL. A body whose every other member is valid is left to the verbs, whose check
 * also looks the host name up.
 */
function withUrlProblem<T extends z.ZodType>(schema: T): T {
  return schema.check(
    z.superRefine(
      (value, ctx) => {
        const url = (value as { url?: unknown } | null)?.url;
        if (typeof url !== "string" || !url || ctx.issues.some((i) => i.path?.[0] === "url")) return;
        const problem = webhookUrlProblem(url, allowPrivateNetworks());
        if (problem) ctx.addIssue({ code: "custom", path: ["url"], message: problem, params: { code: "invalid_webhook_url" } });
      },
      { when: (payload) => payload.issues.length > 0 },
    ),
  ) as T;
}

/** The bodies the verbs of `/v1/app/webhooks` and the console take (`withUrlProblem`). */
export const CreateSubscriptionBody = withUrlProblem(CreateSubscriptionInput);
export const UpdateSubscriptionBody = withUrlProblem(UpdateSubscriptionInput);
