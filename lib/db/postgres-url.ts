/**
 * A PostgreSQL URL as postgres.js should read it, in libpq's forms too (PostgreSQL's "Connection
 * URIs"): a server on a Unix socket is named by its socket's directory, either as a `host`
 * parameter (`postgres://user@/db?host=/var/run/postgresql`) or percent-encoded in place of the
 * host (`postgres://user@%2Fvar%2Frun%2Fpostgresql/db`), and `port` may be a parameter too.
 * postgres.js reads neither: it sends every parameter it does not know to the server as a
 * setting, which refuses `host` ("unrecognized configuration parameter"), so every statement
 * failed; and it took the encoded directory for a host name. Here they become its `host` and
 * `port` options (a `host` that is a directory is a socket to it), and leave the URL. A user
 * before an empty host (`user@/db`), which neither the WHATWG URL parser nor postgres.js reads,
 * becomes its `user` (and `pass`) options. Anything else stays as postgres.js reads it (`?max=`,
 * `?prepare=`, `?sslmode=`, a list of hosts `h1:5432,h2:5433` …).
 *
 * A URL it cannot read throws an Error that names DATABASE_URL and says what is wrong: lib/env.ts
 * checks the setting with this same reading at start, so the service stops on it instead of
 * failing to open the database for ever.
 */
export function postgresConnection(url: string): { url: string; options: { host?: string; port?: number; user?: string; pass?: string } } {
  const { u, scheme, userinfo, hosts } = readPostgresUrl(url);
  const options: { host?: string; port?: number; user?: string; pass?: string } = {};
  const host = u.searchParams.get("host");
  if (host !== null) {
    u.searchParams.delete("host");
    if (host !== "") options.host = host;
  } else {
    let decoded = hosts === "" ? "" : u.hostname;
    try {
      decoded = decodeURIComponent(decoded);
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
  const userBeforeNoHost = hosts === "" && userinfo !== "";
  if (userBeforeNoHost) {
    options.user = decodeURIComponent(u.username);
    if (u.password) options.pass = decodeURIComponent(u.password);
  }
  // Written again only when something left it: anything else reaches postgres.js as given.
  if (host === null && port === null && !userBeforeNoHost) return { url, options };
  const query = u.searchParams.toString();
  return { url: `${scheme}${userBeforeNoHost ? "" : userinfo}${hosts}${u.pathname}${query ? `?${query}` : ""}${u.hash}`, options };
}

/**
 * The parts of a PostgreSQL URL: its scheme (`postgres://` or `postgresql://`), its user and
 * password (with their `@`), its hosts as written (a comma-separated list for postgres.js, empty
 * for its default), and a URL parsed with the first host only (the WHATWG parser takes one) for
 * its user, path and parameters. Throws naming DATABASE_URL when postgres.js could not read it.
 */
function readPostgresUrl(url: string): { u: URL; scheme: string; userinfo: string; hosts: string } {
  const m = /^(postgres(?:ql)?:\/\/)([^/?#]*)(.*)$/is.exec(url);
  if (!m) throw new Error("DATABASE_URL: must be a postgres:// or postgresql:// URL");
  const [, scheme, authority, rest] = m as unknown as [string, string, string, string];
  const at = authority.lastIndexOf("@");
  const userinfo = authority.slice(0, at + 1);
  const hosts = authority.slice(at + 1);
  try {
    // postgres.js decodes the user, password and host so; a `%` that is not an escape fails it.
    decodeURIComponent(authority);
  } catch {
    throw new Error("DATABASE_URL: a % in its user, password or host is not percent-encoding (write % as %25)");
  }
  for (const h of hosts.split(",")) {
    if (hosts !== "" && !URL.canParse(`${scheme}${h}`)) throw new Error(`DATABASE_URL: ${JSON.stringify(h)} is not a host, or a host and port`);
  }
  // The first host stands for them all; an empty one for the default (the parser refuses a user
  // before an empty host).
  const first = hosts.split(",")[0] || (userinfo ? "localhost" : "");
  let u: URL;
  try {
    u = new URL(`${scheme}${userinfo}${first}${rest}`);
  } catch {
    throw new Error("DATABASE_URL: is not a URL that can be read (postgres://user:password@host:port/database)");
  }
  return { u, scheme, userinfo, hosts };
}
