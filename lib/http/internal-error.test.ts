import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { resetEnvForTests } from "../env";
import { setupApi } from "../testing/fixtures";
import { handle, route } from "./api-route";
import { defineOperation } from "./operation";

const api = setupApi();

const boomOp = defineOperation({
  method: "GET",
  path: "/v1/boom",
  operationId: "boom",
  summary: "fails",
  tag: "Test",
  auth: "athlete",
  scope: "athlete.read",
  response: { status: 200, description: "never", schema: z.object({ ok: z.boolean() }) },
  errors: [],
});

afterEach(() => {
  vi.restoreAllMocks();
  process.env.LOG_LEVEL = "silent";
  resetEnvForTests();
});

describe("500: failures on the service's side", () => {
  it("answer internal_error with a trace_id that is also in the server log, and leak nothing else", async () => {
    process.env.LOG_LEVEL = "error";
    resetEnvForTests();
    const logged: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      logged.push(String(chunk));
      return true;
    });
    const { GET } = route({
      GET: handle(boomOp, async () => {
        throw new Error("secret internal detail: connection string postgres://u:p@db");
      }),
    });
    const p = await api.person();
    const req = new Request(`${api.url}/v1/boom`, { headers: { authorization: `Bearer ${await api.pat(p.id)}` } });
    const res = await GET(req, { params: Promise.resolve({}) });

    expect(res.status).toBe(500);
    const body = (await res.json()) as { code: string; trace_id: string; detail: string };
    expect(body.code).toBe("internal_error");
    expect(body.trace_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(body)).not.toContain("secret internal detail");
    expect(res.headers.get("request-id")).toBe(body.trace_id);
    const line = logged.map((l) => JSON.parse(l) as { trace_id?: string; error?: string }).find((l) => l.trace_id === body.trace_id);
    expect(line?.error).toContain("secret internal detail");
  });

  it("answer a response that does not fit its own schema with a 500, never the malformed body", async () => {
    const { GET } = route({ GET: handle(boomOp, async () => ({ ok: "yes" }) as never) });
    const p = await api.person();
    const req = new Request(`${api.url}/v1/boom`, { headers: { authorization: `Bearer ${await api.pat(p.id)}` } });
    const res = await GET(req, { params: Promise.resolve({}) });
    expect(res.status).toBe(500);
    expect(((await res.json()) as { code: string }).code).toBe("internal_error");
  });
});
