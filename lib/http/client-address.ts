import ipaddr from "ipaddr.js";
import { PEER_ADDRESS_HEADER } from "../../scripts/peer-address.mjs";
import { getEnv, type AddressRange } from "../env";

/** An address in its canonical text (IPv4-mapped IPv6 as IPv4), or undefined if it is none. */
function canonical(raw: string | undefined | null): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!raw) return undefined;
  // Proxies may add a port (`1.2.3.4:5678`, `[::1]:5678`); RFC 7239 quotes IPv6.
  let text = raw.trim().replace(/^"|"$/g, "");
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) text = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(":"));
  if (text.length > 64 || !ipaddr.isValid(text)) return undefined;
  const addr = ipaddr.parse(text);
  return addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
}

function trusted(addr: ipaddr.IPv4 | ipaddr.IPv6, ranges: AddressRange[]): boolean {
  return ranges.some(([net, bits]) => addr.kind() === net.kind() && addr.match(net, bits));
}

/**
 * The client's address, as Express's `trust proxy` decides it: start at the socket's peer and,
 * while that hop is a trusted proxy, step left through `X-Forwarded-For`; the first hop that is
 * not trusted is the client. With no trusted proxies `X-Forwarded-For` is never read, so a
 * client cannot choose its own address. A hop that is not an address ends the walk at the last
 * trusted one's word. Always a canonical address of at most 39 characters, or "unknown".
 */
export function resolveClientAddress(peer: string | undefined | null, forwardedFor: string | null, ranges: AddressRange[]): string {
  let current = canonical(peer);
  if (!current) return "unknown";
  if (ranges.length > 0 && forwardedFor) {
    // Only as many hops as a real chain of proxies could add; the rest is the client's word.
    // Cut from the right: the proxies append theirs there, and a client's long header must not
    // push them out of what is read.
    const hops = forwardedFor.slice(-4096).split(",").slice(-32);
    while (trusted(current, ranges) && hops.length > 0) {
      const next = canonical(hops.pop());
      if (!next) break;
      current = next;
    }
  }
  return current.toString();
}

/**
 * The caller's address: the socket's peer (which the server process puts in
 * PEER_ADDRESS_HEADER, overwriting any the client sent), or, through the proxies named in
 * TRUSTED_PROXIES, the address they report in `X-Forwarded-For`. Bounded, so it can key a
 * rate-limit counter.
 */
export function clientAddress(req: Request): string {
  return resolveClientAddress(req.headers.get(PEER_ADDRESS_HEADER), req.headers.get("x-forwarded-for"), getEnv().trustedProxies);
}

/**
 * Whether the request came through a proxy named in TRUSTED_PROXIES (its socket's peer is
 * one): only then are the `X-Forwarded-*` headers the proxy's word rather than the client's.
 */
export function fromTrustedProxy(req: Request): boolean {
  const peer = canonical(req.headers.get(PEER_ADDRESS_HEADER));
  return peer !== undefined && trusted(peer, getEnv().trustedProxies);
}
