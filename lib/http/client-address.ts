/**
 * The caller's address as the proxy in front of us reports it. Next.js fills x-forwarded-for
 * from the socket only when the request has none, so without a proxy that overwrites it a
 * client can choose its own address: limits keyed on it are a brake, not a wall.
 */
export function clientAddress(req: Request): string {
  return req.headers.get("x-forwarded-for")?.split(",")[0]?.trim() || req.headers.get("x-real-ip") || "unknown";
}
