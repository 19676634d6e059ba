import { ApiError } from "./errors";

/** Opaque keyset cursors: base64url JSON of the last row's sort key. */
export function encodeCursor(key: (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

export function decodeCursor(cursor: string, arity: number): string[] {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(v) && v.length === arity && v.every((x) => typeof x === "string" && x.length < 200)) {
      return v as string[];
    }
  } catch {
    // fall through
  }
  throw new ApiError("invalid_cursor", "The cursor is not one this API returned.", {
    errors: [{ field: "cursor", code: "invalid_cursor", detail: "not a cursor from this API" }],
  });
}

/** Fetch `limit + 1` rows; this trims the extra and makes the cursor from the last kept row. */
export function page<T>(rows: T[], limit: number, keyOf: (row: T) => string[]) {
  const more = rows.length > limit;
  const data = more ? rows.slice(0, limit) : rows;
  const last = data[data.length - 1];
  return { data, next_cursor: more && last ? encodeCursor(keyOf(last)) : null };
}
