import ipaddr from "ipaddr.js";
import { z } from "zod";
import { isLoopbackHost } from "../scripts/listen-host.mjs";
import { postgresConnection } from "./db/postgres-url";

/** An address range: a network address and its prefix length. */
export type AddressRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** What `TRUSTED_PROXIES` may name besides addresses and CIDR ranges. */
const NAMED_RANGES: Record<string, string[]> = {
  loopback: ["127.0.0.0/8", "::1/128"],
  private: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
};

/** `TRUSTED_PROXIES` as ranges; undefined when an entry is neither an address, a range nor a name. */
function parseRanges(list: string): AddressRange[] | undefined {
  const ranges: AddressRange[] = [];
  for (const entry of list.split(",").map((x) => x.trim()).filter(Boolean)) {
    for (const item of NAMED_RANGES[entry.toLowerCase()] ?? [entry]) {
      try {
        if (item.includes("/")) ranges.push(ipaddr.parseCIDR(item));
        else {
          const addr = ipaddr.parse(item);
          ranges.push([addr, addr.kind() === "ipv4" ? 32 : 128]);
        }
      } catch {
        return undefined;
      }
    }
  }
  return ranges;
}

const bool = z
  .enum(["true", "false", "1", "0"])
  .transform((v) => v === "true" || v === "1");

/** A whole number written in plain decimal digits (`Number()` would also take `0x5`, `1e1` and ` 10 `). */
const digits = () =>
  z
    .string()
    .regex(/^\d{1,15}$/, "must be a whole number in decimal digits (0-9)")
    .transform(Number);

/** The most a retry may wait: a year (PostgreSQL's intervals, and any sensible schedule, end long before 1e23 seconds). */
const MAX_RETRY_WAIT_S = 365 * 86_400;

const EnvSchema = z.object({
  PORT: digits().pipe(z.number().min(1).max(65535)).default(3000),
  BASE_URL: z
    .url({ protocol: /^https?$/, error: "must be an http:// or https:// URL", abort: true })
    // The address the service is served at, and the issuer its OAuth documents name (RFC 8414
    // §2: no query or fragment): its pages and routes are at the root, so a path would name
    // places that answer 404, and credentials would be published in every document.
    .refine((v) => {
      const u = new URL(v);
      return !u.username && !u.password && !u.search && !u.hash && !v.includes("?") && !v.includes("#") && /^\/*$/.test(u.pathname);
    }, "must be the service's own origin, scheme, host and optional port (https://activities.example.com), without a path, query, fragment or credentials: the service is served at the root of its address")
    .optional(),
  /** The address the server listens on (scripts/server.mjs): unset, loopback only for a loopback BASE_URL, else every interface. */
  HOST: z.string().min(1).optional(),
  /** Read as lib/db/postgres-url.ts reads it to open the database: one reading, so a URL it cannot read stops the service here. */
  DATABASE_URL: z
    .string()
    .superRefine((v, ctx) => {
      try {
        postgresConnection(v);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message.replace(/^DATABASE_URL: /, "") });
      }
    })
    .optional(),
  DATA_DIR: z.string().min(1).default("./.data"),
  SEED_DEMO: bool.optional(),
  /** Read by next.config.ts (Next.js's gzip of answers), checked here with the others. */
  COMPRESS: bool.optional(),
  WEBHOOKS_ALLOW_PRIVATE_NETWORKS: bool.optional(),
  WEBHOOK_RETRY_SCHEDULE_S: z
    .string()
    // A value that is not numbers is told that alone (abort), not also that its waits are too long.
    .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/, { error: "comma-separated seconds", abort: true })
    .refine((v) => v.split(",").every((x) => Number(x) <= MAX_RETRY_WAIT_S), `each wait at most ${MAX_RETRY_WAIT_S} seconds (a year)`)
    .optional(),
  DELIVERY_RUNNER: z.enum(["local", "inngest"]).default("local"),
  /** Inngest's own settings, read by its SDK; checked here only as DELIVERY_RUNNER=inngest needs them. */
  INNGEST_DEV: z.string().optional(),
  INNGEST_EVENT_KEY: z.string().optional(),
  INNGEST_SIGNING_KEY: z.string().optional(),
  RATE_LIMIT_15MIN: digits().pipe(z.number().positive()).default(600),
  RATE_LIMIT_DAILY: digits().pipe(z.number().positive()).default(30_000),
  RATE_LIMIT_OAUTH_TOKEN: digits().pipe(z.number().positive()).default(600),
  AUTH_SECRET: z.string().min(16).optional(),
  /** Read by lib/crypto/seal.ts; checked here with the others (a short key is a weak key). */
  SECRETS_KEY: z.string().min(16).optional(),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
  FILE_WORKERS: digits().pipe(z.number().max(16)).default(1),
  TRUSTED_PROXIES: z
    .string()
    .refine((v) => parseRanges(v) !== undefined, "comma-separated addresses, CIDR ranges, `loopback` or `private`")
    .optional(),
}).superRefine((e, ctx) => {
  // Inngest's SDK runs in dev mode when INNGEST_DEV is true or a URL, and in cloud mode
  // otherwise, where it cannot send an event without the event key (every write's hand-off
  // would fail, leaving each delivery and upload to the minute's sweep, which Inngest could not
  // be told of either) and /api/inngest answers Inngest with 500 without the signing key.
  if (e.DELIVERY_RUNNER !== "inngest") return;
  if (inngestDevMode(e.INNGEST_DEV)) {
    // Dev mode wins over the keys: /api/inngest then runs any function for an unsigned call
    // from anyone, with the event and step results the caller sends, and events go to the dev
    // server. Keys beside it are a deployment with dev mode left on, not a choice.
    const keys = ["INNGEST_EVENT_KEY", "INNGEST_SIGNING_KEY"].filter((k) => e[k as "INNGEST_EVENT_KEY" | "INNGEST_SIGNING_KEY"]);
    if (keys.length === 0) return;
    ctx.addIssue({
      code: "custom",
      path: ["INNGEST_DEV"],
      message: `dev mode accepts unsigned calls on /api/inngest and ignores ${keys.join(" and ")}: unset INNGEST_DEV (Inngest Cloud or a self-hosted Inngest server), or unset the keys (the Inngest dev server)`,
    });
    return;
  }
  if (e.INNGEST_EVENT_KEY && e.INNGEST_SIGNING_KEY) return;
  const missing = ["INNGEST_EVENT_KEY", "INNGEST_SIGNING_KEY"].filter((k) => !e[k as "INNGEST_EVENT_KEY" | "INNGEST_SIGNING_KEY"]);
  ctx.addIssue({
    code: "custom",
    path: ["DELIVERY_RUNNER"],
    message: `inngest needs ${missing.join(" and ")} (Inngest Cloud or a self-hosted Inngest server), or INNGEST_DEV=1 (the Inngest dev server)`,
  });
});

/** Whether Inngest's SDK runs in dev mode: INNGEST_DEV true, or a dev server's URL (its own reading, in inngest's Inngest.mode). */
function inngestDevMode(value: string | undefined): boolean {
  const v = value?.trim().toLowerCase();
  if (!v || v === "false" || v === "0") return false;
  if (v === "true" || v === "1") return true;
  try {
    return Boolean(new URL(v.includes("://") ? v : `http://${v}`));
  } catch {
    return false;
  }
}

export type Env = {
  port: number;
  baseUrl: string;
  /** `{base_url}/v1`: the API, a protected resource of RFC 9728, and the audience of its tokens. */
  apiBaseUrl: string;
  /** `{base_url}/mcp`: the MCP server, the other protected resource (CONTRACT §12). */
  mcpUrl: string;
  databaseUrl: string | undefined;
  dataDir: string;
  seedDemo: boolean;
  webhooksAllowPrivateNetworks: boolean;
  webhookRetryScheduleS: number[] | undefined;
  deliveryRunner: "local" | "inngest";
  rateLimit15Min: number;
  rateLimitDaily: number;
  /** Requests a minute to /oauth/token (and /oauth/revoke) per client and per address. */
  rateLimitOAuthToken: number;
  authSecret: string | undefined;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /**
   * The proxies whose `X-Forwarded-For` hops are believed (`TRUSTED_PROXIES`: comma-separated
   * addresses or CIDR ranges, or `loopback`/`private` for those ranges). Empty: the caller is
   * the socket's peer and `X-Forwarded-For` is ignored.
   */
  trustedProxies: AddressRange[];
  /**
   * Worker threads that parse uploaded files and generate exports (lib/files/worker), so that
   * neither stalls the requests this process serves. 0 does that work on the request thread.
   */
  fileWorkers: number;
};

/**
 * Whether a base URL names this machine as CONTRACT §1 lists it: `localhost`, 127.0.0.0/8 or
 * [::1]. Not `*.localhost` (RFC 6761 reserves them for loopback, but resolving them so is up to
 * each resolver, and the list is exact).
 */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  return isLoopbackHost(host);
}

let cached: Env | undefined;

/** Settings are parsed once; a bad value stops the service with a message naming it. */
export function getEnv(): Env {
  if (cached) return cached;
  const parsed = EnvSchema.safeParse(
    Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== "")),
  );
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  const embedded = !e.DATABASE_URL;
  const baseUrl = (e.BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, "");
  cached = {
    port: e.PORT,
    baseUrl,
    apiBaseUrl: `${baseUrl}/v1`,
    mcpUrl: `${baseUrl}/mcp`,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    seedDemo: e.SEED_DEMO ?? embedded,
    // CONTRACT §1: private networks only for a demo on this machine (embedded database, a
    // loopback BASE_URL, and a server listening on loopback only: HOST, which scripts/server.mjs
    // sets to where it listens); anyone who can reach a service on a network address can sign up.
    webhooksAllowPrivateNetworks: e.WEBHOOKS_ALLOW_PRIVATE_NETWORKS ?? (embedded && isLoopbackUrl(baseUrl) && (!e.HOST || isLoopbackHost(e.HOST))),
    webhookRetryScheduleS: e.WEBHOOK_RETRY_SCHEDULE_S?.split(",").map(Number),
    deliveryRunner: e.DELIVERY_RUNNER,
    rateLimit15Min: e.RATE_LIMIT_15MIN,
    rateLimitDaily: e.RATE_LIMIT_DAILY,
    rateLimitOAuthToken: e.RATE_LIMIT_OAUTH_TOKEN,
    authSecret: e.AUTH_SECRET,
    logLevel: e.LOG_LEVEL,
    trustedProxies: parseRanges(e.TRUSTED_PROXIES ?? "") ?? [],
    fileWorkers: e.FILE_WORKERS,
  };
  return cached;
}

/** Tests change process.env between files; production never calls this. */
export function resetEnvForTests(): void {
  cached = undefined;
}
