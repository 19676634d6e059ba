/**
 * A PostgreSQL URL as postgres.js should read it, in libpq's forms too (PostgreSQL's "Connection
 * URIs"): a server on a Unix socket is named by its socket's directory, either as a `host`
 * parameter (`postgres://user@/db?host=/var/run/postgresql`) or percent-encoded in place of the
 * host (`postgres://user@%2Fvar%2Frun%2Fpostgresql/db`), and `port` may be a parameter too.
 * postgres.js reads neither: it sends every parameter it does not know to the server as a
 * setting, which refuses `host` ("unrecognized configuration parameter"), so every statement
 * failed; and it took the encoded directory for a host name. Here they become its `host` and
 * `port` options (a `host` that is a directory is a socket to it), and leave the URL. Anything
 * else stays as postgres.js reads it (`?max=`, `?prepare=`, `?sslmode=` …).
 */
export function postgresConnection(url: string): { url: string; options: { host?: string; port?: number } } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { url, options: {} };
  }
  const options: { host?: string; port?: number } = {};
  const host = u.searchParams.get("host");
  if (host !== null) {
    u.searchParams.delete("host");
    if (host !== "") options.host = host;
  } else {
    let decoded = u.hostname;
    try {
      decoded = decodeURIComponent(u.hostname);
    } catch {
      // Not percent-encoding: postgres.js reads the host as it is.
    }
    // postgres.js takes its `host` option over the URL's host.
    if (decoded.startsWith("/")) options.host = decoded;
  }
  const port = u.searchParams.get("port");
  if (port !== null) {
    u.searchParams.delete("port");
    const n = Number(port);
    if (!/^\d{1,5}$/.test(port) || n < 1 || n > 65_535) throw new Error(`DATABASE_URL: port=${port} is not a TCP port`);
    options.port = n;
  }
  // Written again only when a parameter left it: anything else reaches postgres.js as given.
  return { url: host === null && port === null ? url : u.toString(), options };
}
