import { afterEach, describe, expect, it } from "vitest";
import { getEnv, resetEnvForTests } from "./env";

// The settings of CONTRACT §1 and the README's Configuration: a bad value stops the service
// with a message naming it, never a value the operator did not write.

const saved = { ...process.env };

function envWith(vars: Record<string, string>) {
  resetEnvForTests();
  for (const [k, v] of Object.entries(vars)) process.env[k] = v;
  try {
    return getEnv();
  } finally {
    for (const k of Object.keys(vars)) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
}

afterEach(() => resetEnvForTests());

describe("settings read as numbers", () => {
  it("take plain decimal digits", () => {
    const env = envWith({ PORT: "3100", RATE_LIMIT_15MIN: "5", RATE_LIMIT_DAILY: "10", RATE_LIMIT_OAUTH_TOKEN: "7", FILE_WORKERS: "0" });
    expect(env).toMatchObject({ port: 3100, rateLimit15Min: 5, rateLimitDaily: 10, rateLimitOAuthToken: 7, fileWorkers: 0 });
  });

  it.each([
    ["RATE_LIMIT_15MIN", "0x5"],
    ["RATE_LIMIT_DAILY", "1e1"],
    ["RATE_LIMIT_15MIN", " 10 "],
    ["RATE_LIMIT_OAUTH_TOKEN", "0b11"],
    ["FILE_WORKERS", "2.0"],
    ["PORT", "0x50"],
    ["RATE_LIMIT_15MIN", "0"],
    ["FILE_WORKERS", "17"],
  ])("refuse %s=%j, naming it", (name, value) => {
    expect(() => envWith({ [name]: value })).toThrow(new RegExp(`Invalid configuration:[\\s\\S]*${name}`));
  });
});

describe("WEBHOOK_RETRY_SCHEDULE_S", () => {
  it("takes comma-separated seconds, and refuses a wait no interval holds", () => {
    expect(envWith({ WEBHOOK_RETRY_SCHEDULE_S: "1,2.5,30" }).webhookRetryScheduleS).toEqual([1, 2.5, 30]);
    expect(() => envWith({ WEBHOOK_RETRY_SCHEDULE_S: "1,99999999999999999999999" })).toThrow(/WEBHOOK_RETRY_SCHEDULE_S: each wait at most/);
  });

  it.each(["soon", "1,x", "1,,2"])("refuses %j with one message, that it is not comma-separated seconds", (value) => {
    let message = "";
    try {
      envWith({ WEBHOOK_RETRY_SCHEDULE_S: value });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe("Invalid configuration:\n  WEBHOOK_RETRY_SCHEDULE_S: comma-separated seconds");
  });
});

describe("DATABASE_URL", () => {
  it("takes the PostgreSQL URLs the README names, libpq's socket forms too", () => {
    for (const url of [
      "postgres://postgres@127.0.0.1:5432/athletes",
      "postgresql://me:p%40ss@db.internal/aas?sslmode=require&max=4&prepare=false",
      "postgres://user@/db?host=/var/run/postgresql",
      "postgres://user@%2Fvar%2Frun%2Fpostgresql/db?port=5433",
      "postgres://me@h1:5432,h2:5433/aas",
    ]) {
      expect(envWith({ DATABASE_URL: url }).databaseUrl, url).toBe(url);
    }
  });

  it.each([
    ["notaurl", /must be a postgres:\/\/ or postgresql:\/\/ URL/],
    ["http://db.internal/aas", /must be a postgres:\/\/ or postgresql:\/\/ URL/],
    ["postgres://postgres@127.0.0.1/athletes?port=abc", /port=abc is not a TCP port/],
    ["postgres://postgres@127.0.0.1:abc/athletes", /is not a host/],
    ["postgres://postgres@db internal/athletes", /is not a host/],
    ["postgres://me:100%@127.0.0.1/athletes", /not percent-encoding/],
  ])("refuses %j, naming it, instead of starting to answer 503 for ever", (url, says) => {
    expect(() => envWith({ DATABASE_URL: url })).toThrow(/Invalid configuration:\n {2}DATABASE_URL: /);
    expect(() => envWith({ DATABASE_URL: url })).toThrow(says);
  });
});

describe("BASE_URL", () => {
  it("is an http:// or https:// URL", () => {
    expect(envWith({ BASE_URL: "https://api.example.com/" }).baseUrl).toBe("https://api.example.com");
    for (const bad of ["ftp://x", "javascript:alert(1)", "localhost:3000"]) {
      expect(() => envWith({ BASE_URL: bad }), bad).toThrow(/BASE_URL: must be an http:\/\/ or https:\/\/ URL/);
    }
  });

  it("is the service's origin alone: a path, a query, a fragment or credentials would be published as the issuer and in every link, and answer 404", () => {
    expect(envWith({ BASE_URL: "http://localhost:3112" }).baseUrl).toBe("http://localhost:3112");
    expect(envWith({ BASE_URL: "https://activities.example.com:8443//" }).baseUrl).toBe("https://activities.example.com:8443");
    for (const bad of ["http://localhost:3112/svc?x=1#frag", "http://localhost:3112/svc", "https://example.com/?x=1", "https://example.com?", "https://example.com/#", "https://user:pw@example.com", "https://user@example.com/"]) {
      expect(() => envWith({ BASE_URL: bad }), bad).toThrow(/BASE_URL: must be the service's own origin/);
    }
  });
});

describe("SECRETS_KEY", () => {
  it("is at least 16 characters where it is set (generated into DATA_DIR/secrets.json otherwise)", () => {
    expect(() => envWith({ SECRETS_KEY: "kill-restart-test-key" })).not.toThrow();
    expect(() => envWith({ SECRETS_KEY: "a" })).toThrow(/Invalid configuration:[\s\S]*SECRETS_KEY/);
  });
});

describe("switches", () => {
  it.each(["SEED_DEMO", "WEBHOOKS_ALLOW_PRIVATE_NETWORKS", "COMPRESS"])("%s takes true, false, 1 or 0, and refuses anything else, naming it", (name) => {
    for (const ok of ["true", "false", "1", "0"]) expect(() => envWith({ [name]: ok }), ok).not.toThrow();
    for (const bad of ["no", "yes", "off", "TRUE"]) expect(() => envWith({ [name]: bad }), bad).toThrow(new RegExp(`Invalid configuration:[\\s\\S]*${name}`));
  });
});

describe("DELIVERY_RUNNER=inngest", () => {
  it("starts with Inngest's dev server (INNGEST_DEV true or its URL) or with both of Inngest's keys", () => {
    for (const dev of ["1", "true", "http://localhost:8288", "localhost:8288"]) {
      expect(envWith({ DELIVERY_RUNNER: "inngest", INNGEST_DEV: dev }).deliveryRunner, dev).toBe("inngest");
    }
    expect(envWith({ DELIVERY_RUNNER: "inngest", INNGEST_EVENT_KEY: "ek", INNGEST_SIGNING_KEY: "signkey-prod-ab" }).deliveryRunner).toBe("inngest");
  });

  it("refuses to start without them, naming what is missing (events could not be sent, nor /api/inngest answer)", () => {
    const refusal = (vars: Record<string, string>) => {
      try {
        envWith({ DELIVERY_RUNNER: "inngest", ...vars });
      } catch (err) {
        return (err as Error).message;
      }
      return "started";
    };
    expect(refusal({})).toMatch(/DELIVERY_RUNNER: inngest needs INNGEST_EVENT_KEY and INNGEST_SIGNING_KEY .*or INNGEST_DEV=1/);
    expect(refusal({ INNGEST_DEV: "0", INNGEST_EVENT_KEY: "ek" })).toMatch(/DELIVERY_RUNNER: inngest needs INNGEST_SIGNING_KEY \(/);
    expect(refusal({ INNGEST_SIGNING_KEY: "k" })).toMatch(/DELIVERY_RUNNER: inngest needs INNGEST_EVENT_KEY \(/);
    // The local runner needs none of them.
    expect(envWith({ DELIVERY_RUNNER: "local" }).deliveryRunner).toBe("local");
  });

  it("refuses INNGEST_DEV beside either key: dev mode would ignore them and run functions for unsigned calls", () => {
    const refusal = (vars: Record<string, string>) => {
      try {
        envWith({ DELIVERY_RUNNER: "inngest", ...vars });
      } catch (err) {
        return (err as Error).message;
      }
      return "started";
    };
    const keys = { INNGEST_EVENT_KEY: "ek", INNGEST_SIGNING_KEY: "signkey-prod-ab" };
    for (const dev of ["1", "true", "http://localhost:8288"]) {
      expect(refusal({ INNGEST_DEV: dev, ...keys }), dev).toMatch(/INNGEST_DEV: dev mode accepts unsigned calls on \/api\/inngest and ignores INNGEST_EVENT_KEY and INNGEST_SIGNING_KEY/);
    }
    expect(refusal({ INNGEST_DEV: "1", INNGEST_SIGNING_KEY: "k" })).toMatch(/INNGEST_DEV: .*ignores INNGEST_SIGNING_KEY: unset INNGEST_DEV/);
    expect(refusal({ INNGEST_DEV: "1", INNGEST_EVENT_KEY: "ek" })).toMatch(/INNGEST_DEV: .*ignores INNGEST_EVENT_KEY: /);
    // INNGEST_DEV off: the keys alone, as before.
    expect(refusal({ INNGEST_DEV: "0", ...keys })).toBe("started");
  });
});
