// Where the server listens when neither `-H` nor HOST says: on loopback only when the service's
// own address (BASE_URL, else http://localhost:PORT) is a loopback one, so that "a demo on your
// own machine", the case in which webhooks may reach private networks (lib/env.ts), is one
// nobody else can reach; on every interface otherwise (undefined: node:http's default).

/** Whether a host name (as in a URL, brackets taken off) is this machine's loopback. */
export function isLoopbackHost(host) {
  const h = String(host).replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The address to listen on for `baseUrl`: `::1` for an IPv6 loopback, `127.0.0.1` for any other loopback, else undefined. */
export function defaultListenHost(baseUrl) {
  let host;
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    return undefined;
  }
  if (!isLoopbackHost(host)) return undefined;
  return host.replace(/^\[|\]$/g, "") === "::1" ? "::1" : "127.0.0.1";
}
