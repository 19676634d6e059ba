import "server-only";
import dns from "node:dns";
import net from "node:net";
import ipaddr from "ipaddr.js";
import { Agent, request, errors as undiciErrors } from "undici";

export const RESPONSE_EXCERPT_BYTES = 4096;

export type NotSentReason =
  | "blocked_address"
  | "dns"
  | "connection_refused"
  | "connection_reset"
  | "timeout"
  | "tls"
  | "invalid_url"
  /** What came back was not an HTTP answer, its headers ran past what is read (16 KiB), or it began with an interim 100 or 101 not asked for. */
  | "invalid_response"
  | "network";

export type OutboundResult =
  | {
      outcome: "response";
      status: number;
      /** The media type of the answer (`text/html`), when it named a well-formed one. */
      contentType: string | null;
      /** The start of the body as read, at most 4 KiB (or `readLimitBytes`): the receiver's own words, not yet fit to show anyone else. */
      bodyExcerpt: string;
      /** Whether the body ended within the limit, so `bodyExcerpt` is all of it. */
      bodyComplete: boolean;
      /** Why the body stopped before its end (the time ran out, the connection broke), or null. */
      bodyError: NotSentReason | null;
      /** The answer's caching headers, for a caller that may keep what it read (a client metadata document). */
      cacheControl: string | null;
      expires: string | null;
      durationMs: number;
    }
  | { outcome: "not_sent"; error: NotSentReason; detail: string; durationMs: number };

class BlockedAddress extends Error {
  code = "BLOCKED_ADDRESS";
}

/** `address` parsed, an IPv4-mapped IPv6 address as the IPv4 address it reaches; null when it is none. */
function parsedAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (!ipaddr.isValid(address)) return null;
  const ip = ipaddr.parse(address);
  return ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

/** Public unicast only; loopback, private, link-local, CGNAT, multicast and reserved ranges are not. */
export function isPublicAddress(address: string): boolean {
  const ip = parsedAddress(address);
  return ip !== null && isPublicIp(ip);
}

function isPublicIp(ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  // `::a.b.c.d`, the deprecated IPv4-compatible form (RFC 4291 §2.5.5.1), which ipaddr.js calls
  // unicast: no public host has such an address, and a stack that still maps it reaches a.b.c.d.
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).parts.slice(0, 6).every((p) => p === 0)) return false;
  return ip.range() === "unicast";
}

/**
 * Where clouds answer a machine's own questions: its instance metadata and credentials. Beside
 * all of link-local (169.254.169.254 for most of them), AWS's and Google's IPv6 addresses
 * (unique-local), Alibaba's (in the CGNAT range) and Azure's wire server (a public address).
 */
const CLOUD_METADATA_ADDRESSES = new Set(
  ["fd00:ec2::254", "fd20:ce::254", "100.100.100.200", "168.63.129.16"].map((a) => ipaddr.parse(a).toNormalizedString()),
);

/**
 * The IPv4 address an IPv6 one carries inside it, where a stack or a gateway may reach that
 * address through it: IPv4-compatible (`::a.b.c.d`), translated (`::ffff:0:a.b.c.d`), NAT64
 * (`64:ff9b::a.b.c.d`), 6to4 (`2002:AABB:CCDD::`) and Teredo (the client's, inverted).
 */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = ip.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const range = ip.range();
  if (range === "rfc6145" || range === "rfc6052" || p.slice(0, 6).every((x) => x === 0)) return v4(p[6]!, p[7]!);
  if (range === "6to4") return v4(p[1]!, p[2]!);
  if (range === "teredo") return v4(~p[6]! & 0xffff, ~p[7]! & 0xffff);
  return null;
}

/** A link-local address or a cloud's metadata service, itself or inside an IPv6 address. */
function isMachineLocal(ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (ip.range() === "linkLocal" || CLOUD_METADATA_ADDRESSES.has(ip.toNormalizedString())) return true;
  const inner = ip.kind() === "ipv6" ? embeddedIPv4(ip as ipaddr.IPv6) : null;
  return inner !== null && isMachineLocal(inner);
}

function isMachineLocalAddress(address: string): boolean {
  const ip = parsedAddress(address);
  return ip !== null && isMachineLocal(ip);
}

/**
 * Whether a request the service makes for a user may connect to `address`. Public unicast
 * addresses, and loopback and private ones too while private networks are allowed (CONTRACT
 * §1), but never link-local or a cloud's metadata service: allowed, a webhook's delivery log
 * (which shows the start of every answer) would read the machine's cloud credentials back to
 * whoever registered the URL.
 */
export function mayConnectTo(address: string, allowPrivate: boolean): boolean {
  const ip = parsedAddress(address);
  if (!ip || isMachineLocal(ip)) return false;
  return allowPrivate || isPublicIp(ip);
}

/** Why a name none of whose `addresses` may be connected to is refused, in words. */
export function nameRefusal(hostname: string, addresses: readonly { address: string }[]): string {
  const local = addresses.every((a) => isMachineLocalAddress(a.address));
  return `the host ${hostname} resolves only to ${local ? "link-local or cloud metadata" : "non-public"} addresses`;
}

/** Why `mayConnectTo` refuses `address`, in words: which of its rules it broke. */
export function addressRefusal(address: string): string {
  return isMachineLocalAddress(address) ? `${address} is a link-local or cloud metadata address` : `${address} is not a public address`;
}

/**
 * A dispatcher whose every connection checks the address it is about to connect to, after
 * DNS resolution, so a name that resolves to a private address (or is re-pointed there after
 * a check, DNS rebinding) is refused at connect time.
 */
function dispatcher(allowPrivate: boolean, timeoutMs: number): Agent {
  const lookup: net.LookupFunction = (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return (callback as (e: Error) => void)(err);
      const list = addresses as dns.LookupAddress[];
      const allowed = list.filter((a) => mayConnectTo(a.address, allowPrivate));
      if (!allowed.length) return (callback as (e: Error) => void)(new BlockedAddress(nameRefusal(hostname, list)));
      if ((options as dns.LookupOptions).all) return (callback as (e: null, a: dns.LookupAddress[]) => void)(null, allowed);
      return (callback as (e: null, a: string, f: number) => void)(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
  return new Agent({ connect: { lookup, timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connections: 64 });
}

const agents = new Map<string, Agent>();
function agentFor(allowPrivate: boolean, timeoutMs: number): Agent {
  const key = `${allowPrivate}:${timeoutMs}`;
  let a = agents.get(key);
  if (!a) agents.set(key, (a = dispatcher(allowPrivate, timeoutMs)));
  return a;
}

function classify(err: unknown): { error: NotSentReason; detail: string } {
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? "";
  const detail = e.cause?.message ?? e.message ?? String(err);
  if (err instanceof BlockedAddress || code === "BLOCKED_ADDRESS" || e.cause instanceof BlockedAddress) return { error: "blocked_address", detail };
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "ENODATA") return { error: "dns", detail };
  if (code === "ECONNREFUSED") return { error: "connection_refused", detail };
  // undici closes the connection on an interim answer it did not ask for (100 Continue, 101
  // Switching Protocols), and on an answer sent before any request: the receiver's doing, not a reset.
  if (code === "UND_ERR_SOCKET" && e.message === "bad response") {
    return { error: "invalid_response", detail: "The receiver sent an answer that was not asked for (such as 100 Continue before its final status), so its answer could not be read." };
  }
  if (code === "UND_ERR_SOCKET" && e.message === "bad upgrade") {
    return { error: "invalid_response", detail: "The receiver answered 101 Switching Protocols, which the delivery did not ask for." };
  }
  if (code === "ECONNRESET" || code === "UND_ERR_SOCKET" || code === "EPIPE") return { error: "connection_reset", detail };
  if (
    err instanceof undiciErrors.ConnectTimeoutError ||
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    e.name === "TimeoutError" ||
    e.name === "AbortError" ||
    code === "ETIMEDOUT" ||
    code.startsWith("UND_ERR_") && code.includes("TIMEOUT")
  ) {
    return { error: "timeout", detail };
  }
  if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL)/.test(code)) return { error: "tls", detail };
  if (err instanceof undiciErrors.HeadersOverflowError || err instanceof undiciErrors.HTTPParserError || code === "UND_ERR_HEADERS_OVERFLOW" || code.startsWith("HPE_")) {
    return { error: "invalid_response", detail };
  }
  return { error: "network", detail };
}

/** The media type of a Content-Type header, lower-cased, or null unless it is a well-formed `type/subtype`. */
export function mediaType(header: string | string[] | undefined): string | null {
  const value = (Array.isArray(header) ? header[0] : header)?.split(";")[0]?.trim().toLowerCase() ?? "";
  return /^[a-z0-9!#$&^_.+-]{1,64}\/[a-z0-9!#$&^_.+-]{1,64}$/.test(value) ? value : null;
}

/**
 * One outbound request the service makes for a user (a webhook subscriber, a client's metadata
 * document): no redirects followed, at most `timeoutMs` in all, the answer read to at most
 * `readLimitBytes` (4 KiB), and every way of not getting an answer named. An answer whose status
 * arrived is an answer, though its body did not finish in time.
 */
export async function sendOutbound(opts: {
  url: string;
  method: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  allowPrivate: boolean;
  timeoutMs: number;
  readLimitBytes?: number;
}): Promise<OutboundResult> {
  const limit = opts.readLimitBytes ?? RESPONSE_EXCERPT_BYTES;
  const started = performance.now();
  const done = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    url = new URL(opts.url);
  } catch {
    return { outcome: "not_sent", error: "invalid_url", detail: "not a URL", durationMs: done() };
  }
  // An IP literal never reaches the lookup above: check it here.
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (net.isIP(host) && !mayConnectTo(host, opts.allowPrivate)) {
    return { outcome: "not_sent", error: "blocked_address", detail: addressRefusal(host), durationMs: done() };
  }
  // The scheme is checked when sending too, not only when the URL was stored: one stored while
  // private networks were allowed (CONTRACT §1) may not go out over plain HTTP once they are not.
  if (url.protocol !== "https:" && !(opts.allowPrivate && url.protocol === "http:")) {
    return { outcome: "not_sent", error: "invalid_url", detail: `${url.protocol}// is not allowed: https:// only`, durationMs: done() };
  }
  try {
    const res = await request(url, {
      method: opts.method,
      headers: opts.headers,
      body: opts.body,
      dispatcher: agentFor(opts.allowPrivate, opts.timeoutMs),
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let complete = false;
    let bodyError: NotSentReason | null = null;
    try {
      for await (const chunk of res.body) {
        const b = chunk as Buffer;
        chunks.push(b);
        size += b.length;
        if (size > limit) break;
      }
      complete = size <= limit;
    } catch (err) {
      // The status line came: that is the answer (SPEC §6.4: any 2xx is success), with what of
      // its body arrived before the time ran out or the connection broke.
      bodyError = classify(err).error;
    } finally {
      // Only a body cut short is destroyed: one read to its end leaves the connection reusable.
      if (!complete) res.body.destroy();
    }
    const bodyExcerpt = Buffer.concat(chunks).subarray(0, limit).toString("utf8");
    const header = (name: string) => {
      const v = res.headers[name];
      return (Array.isArray(v) ? v.join(", ") : v) ?? null;
    };
    return {
      outcome: "response",
      status: res.statusCode,
      contentType: mediaType(res.headers["content-type"]),
      bodyExcerpt,
      bodyComplete: complete,
      bodyError,
      cacheControl: header("cache-control"),
      expires: header("expires"),
      durationMs: done(),
    };
  } catch (err) {
    return { outcome: "not_sent", ...classify(err), durationMs: done() };
  }
}
