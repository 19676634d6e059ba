import { describe, expect, it } from "vitest";
import { ApiError } from "./errors";
import { decodeCursor } from "./pagination";

describe("decodeCursor", () => {
  const encode = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

  it("refuses ids PostgreSQL cannot take (a NUL, a lone surrogate) as invalid_cursor, not a 500 later", () => {
    for (const bad of [["team_\u0000x"], ["\ud800"]]) {
      let err: unknown;
      try {
        decodeCursor(encode(bad), 1);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe("invalid_cursor");
    }
    expect(decodeCursor(encode(["team_x"]), 1)).toEqual(["team_x"]);
  });
});
