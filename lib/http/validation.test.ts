import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ApiError } from "./errors";
import { parseWith } from "./validation";

const Body = z.object({ name: z.string(), tags: z.array(z.string()).optional() });

function refusal(input: unknown, where: "body" | "query" | "path" = "body"): ApiError {
  try {
    parseWith(Body, input, where);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error("accepted");
}

describe("parseWith", () => {
  it("refuses text PostgreSQL cannot store, naming the field, before the schema sees it", () => {
    const nul = refusal({ name: "Morning\u0000run" });
    expect(nul.status).toBe(400);
    expect(nul.code).toBe("invalid_request");
    expect(nul.errors).toEqual([{ field: "name", code: "invalid_request", detail: expect.any(String) }]);
    expect(refusal({ name: "ok", tags: ["a", "\ud800"] }).errors?.map((e) => e.field)).toEqual(["tags.1"]);
    expect(refusal({ ["a\u0000"]: 1, name: "x" }).errors?.map((e) => e.field)).toEqual(["a?"]);
    expect(refusal({ id: "\u0000" }, "path").message).toMatch(/path parameters/);
  });

  it("lists at most 20 problems, each unknown member's name cut to 200 characters, and says how many more there are", () => {
    const many = Object.fromEntries(Array.from({ length: 80_000 }, (_, i) => [`k${i}`, 1]));
    const strict = z.strictObject({ name: z.string() });
    const refused = (input: unknown) => {
      try {
        parseWith(strict, input, "body");
      } catch (err) {
        if (err instanceof ApiError) return err;
        throw err;
      }
      throw new Error("accepted");
    };
    const e = refused({ name: "x", ...many });
    expect(e.errors).toHaveLength(20);
    expect(e.errors![0]).toEqual({ field: "k0", code: "invalid_request", detail: "is not a known field" });
    expect(e.message).toMatch(/; and 79980 more$/);
    expect(e.message.length).toBeLessThan(2_000);
    const long = refused({ name: "x", ["y".repeat(1_000_000)]: 1 });
    expect(long.errors![0]!.field.length).toBeLessThanOrEqual(200);
    const nul = refused(Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`n${i}\u0000`, 1])));
    expect(nul.errors).toHaveLength(20);
    expect(nul.message).toMatch(/, and 4980 more$/);
  });

  it("accepts what it can store, astral characters included", () => {
    expect(parseWith(Body, { name: "🏃‍♀️ Løp \u202e" }, "body")).toEqual({ name: "🏃‍♀️ Løp \u202e" });
  });

  it("says a missing member is required, and keeps the schema's words for a wrong one", () => {
    const Input = z.object({
      name: z.string(),
      count: z.number(),
      kind: z.enum(["a", "b"]),
      days: z.union([z.literal(7), z.literal(30)]).nullable(),
      nested: z.object({ id: z.string() }),
      note: z.string().optional(),
    });
    const refused = (input: unknown): ApiError => {
      try {
        parseWith(Input, input, "body");
      } catch (err) {
        if (err instanceof ApiError) return err;
      }
      throw new Error("accepted");
    };
    expect(refused({ nested: {} }).errors).toEqual(
      ["name", "count", "kind", "days", "nested.id"].map((field) => ({ field, code: expect.any(String), detail: "is required" })),
    );
    const wrong = refused({ name: 1, count: "2", kind: "c", days: 8, nested: { id: null } });
    expect(wrong.errors?.map((e) => e.detail)).toEqual([
      "Invalid input: expected string, received number",
      "Invalid input: expected number, received string",
      'Invalid option: expected one of "a"|"b"',
      "Invalid input",
      "Invalid input: expected string, received null",
    ]);
    expect(wrong.errors?.some((e) => e.detail === "is required")).toBe(false);
  });

  it("calls text that names no value of an enum invalid_enum_value, and a missing one or one of another type invalid_request", () => {
    const Input = z.strictObject({ kind: z.enum(["a", "b"]) });
    const codeFor = (input: unknown) => {
      try {
        parseWith(Input, input, "body");
      } catch (err) {
        if (err instanceof ApiError) return [err.code, err.errors?.[0]?.code];
      }
      throw new Error("accepted");
    };
    expect(codeFor({ kind: "c" })).toEqual(["invalid_enum_value", "invalid_enum_value"]);
    expect(codeFor({ kind: "" })).toEqual(["invalid_enum_value", "invalid_enum_value"]);
    for (const input of [{}, { kind: null }, { kind: 5 }, { kind: ["a"] }, { kind: { a: 1 } }]) {
      expect(codeFor(input), JSON.stringify(input)).toEqual(["invalid_request", "invalid_request"]);
    }
    expect(() => parseWith(z.object({ keys: z.array(z.enum(["a"])) }), { keys: ["a", "z"] }, "query")).toThrow(
      expect.objectContaining({ code: "invalid_enum_value" }),
    );
  });

  it("names a value past two bounds of one kind once, by the field's own bound", () => {
    const Input = z.object({ seconds: z.number().int().min(0).max(2_592_000), count: z.number().int().min(1), name: z.string().min(1).max(5) });
    let refusal: ApiError | undefined;
    try {
      parseWith(Input, { seconds: 1e20, count: -1e20, name: "" }, "body");
    } catch (err) {
      if (err instanceof ApiError) refusal = err;
    }
    expect(refusal?.errors).toEqual([
      { field: "seconds", code: "invalid_request", detail: "Too big: expected number to be <=2592000" },
      { field: "count", code: "invalid_request", detail: "Too small: expected number to be >=1" },
      { field: "name", code: "invalid_request", detail: "Too small: expected string to have >=1 characters" },
    ]);
  });

  it("walks any nesting the JSON parser accepted without running out of stack", () => {
    const deep = JSON.parse("[".repeat(100_000) + "]".repeat(100_000)) as unknown;
    expect(refusal(deep).code).toBe("invalid_request");
  });
});
