import { afterEach, describe, expect, it, vi } from "vitest";
import { errorText, log, MAX_LINE_CHARS } from "./log";
import { resetEnvForTests } from "./env";

afterEach(() => {
  vi.restoreAllMocks();
  process.env.LOG_LEVEL = "silent";
  resetEnvForTests();
});

function captureStderr(): string[] {
  process.env.LOG_LEVEL = "warn";
  resetEnvForTests();
  const lines: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  return lines;
}

describe("log lines", () => {
  it("never carry a failed query's parameters, and stay bounded", () => {
    const lines = captureStderr();
    const params = Array.from({ length: 5_000 }, (_, i) => `secret-${i}`).join(",");
    // The message drizzle gives a failed query: its SQL, then every parameter of the batch.
    const err = new Error(`Failed query: insert into rate_limit_counters values ($1)\nparams: ${params}`, {
      cause: new Error("index row size 8040 exceeds btree version 4 maximum 2704"),
    });
    log.error("unhandled error", { error: errorText(err) });
    log.error("unhandled error", { error: String(err), detail: "y".repeat(100_000) });
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line.length).toBeLessThanOrEqual(MAX_LINE_CHARS + 200);
      expect(line).not.toContain("secret-1");
      expect(() => JSON.parse(line)).not.toThrow();
    }
    expect(lines[0]).toContain("insert into rate_limit_counters");
    expect(lines[0]).toContain("index row size");
  });
});
