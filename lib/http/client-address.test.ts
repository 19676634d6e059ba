import { afterEach, describe, expect, it } from "vitest";
import { getEnv, resetEnvForTests } from "../env";
import { resolveClientAddress } from "./client-address";

// Vite sets BASE_URL to "/" in tests; the settings need a URL.
process.env.BASE_URL = "http://localhost:3000";

afterEach(() => {
  delete process.env.TRUSTED_PROXIES;
  resetEnvForTests();
});

function ranges(list: string) {
  process.env.TRUSTED_PROXIES = list;
  resetEnvForTests();
  return getEnv().trustedProxies;
}

describe("resolveClientAddress", () => {
  it("is the socket's peer when no proxy is trusted, whatever X-Forwarded-For says", () => {
    expect(resolveClientAddress("203.0.113.9", "198.51.100.1", [])).toBe("203.0.113.9");
    expect(resolveClientAddress("::ffff:203.0.113.9", "x".repeat(8000), [])).toBe("203.0.113.9");
  });

  it("walks X-Forwarded-For from the right through trusted proxies only", () => {
    const trusted = ranges("loopback, 10.0.0.0/8");
    // client → 10.1.1.1 (trusted) → 127.0.0.1 (trusted, the socket)
    expect(resolveClientAddress("127.0.0.1", "198.51.100.7, 10.1.1.1", trusted)).toBe("198.51.100.7");
    // A client that prepends its own choice does not get it: the first untrusted hop wins.
    expect(resolveClientAddress("127.0.0.1", "1.2.3.4, 198.51.100.7", trusted)).toBe("198.51.100.7");
    // A socket peer that is not a trusted proxy: its header is not believed.
    expect(resolveClientAddress("203.0.113.9", "198.51.100.7", trusted)).toBe("203.0.113.9");
    // A client's long header cannot push the hops its proxies appended out of what is read.
    const padded = `${"x".repeat(4088)},6.6.6.6, 203.0.113.7`;
    expect(resolveClientAddress("10.0.0.1", padded, trusted)).toBe("203.0.113.7");
  });

  it("stops at a hop that is not an address, and always answers something bounded", () => {
    const trusted = ranges("loopback");
    expect(resolveClientAddress("127.0.0.1", `${"a".repeat(8000)}`, trusted)).toBe("127.0.0.1");
    expect(resolveClientAddress("127.0.0.1", "[2001:db8::1]:443", trusted)).toBe("2001:db8::1");
    expect(resolveClientAddress("127.0.0.1", "198.51.100.7:5000", trusted)).toBe("198.51.100.7");
    expect(resolveClientAddress(undefined, "198.51.100.7", trusted)).toBe("unknown");
    const hops = Array.from({ length: 10_000 }, () => "127.0.0.1").join(",");
    expect(resolveClientAddress("127.0.0.1", hops, trusted).length).toBeLessThanOrEqual(39);
  });

  it("refuses a TRUSTED_PROXIES entry that is not an address, range or name, naming the setting", () => {
    process.env.TRUSTED_PROXIES = "10.0.0.0/8, proxy.internal";
    resetEnvForTests();
    expect(() => getEnv()).toThrow(/TRUSTED_PROXIES/);
  });
});
