import { isValidLocalDateTime } from "../time/local";
import { ApiError } from "./errors";
import { isStorableText } from "./validation";

/** Opaque keyset cursors: base64url JSON of the last row's sort key. */
export function encodeCursor(key: (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

export function invalidCursor(): ApiError {
  return new ApiError("invalid_cursor", "The cursor is not one this API returned.", {
    errors: [{ field: "cursor", code: "invalid_cursor", detail: "not a cursor from this API" }],
  });
}

export function decodeCursor(cursor: string, arity: number): string[] {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(v) && v.length === arity && v.every((x) => typeof x === "string" && x.length < 200 && isStorableText(x))) {
      return v as string[];
    }
  } catch {
    // fall through
  }
  throw invalidCursor();
}

/**
 * An `(id)` cursor, as the team and member lists issue: the id must be one of the list's own
 * (`idPrefix`, as `newId` makes them), so a members cursor given to the team list is refused,
 * not read as a position in it.
 */
export function decodeIdCursor(cursor: string, idPrefix: "team" | "ath"): string {
  const [id] = decodeCursor(cursor, 1) as [string];
  if (!id.startsWith(`${idPrefix}_`)) throw invalidCursor();
  return id;
}

const PG_LOCAL_TIMESTAMP = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d{1,6})?$/;

/**
 * A `(local timestamp, id)` cursor, as the activity and metric lists issue. The timestamp
 * goes into SQL as a `timestamp`, so a forged one must be refused here, not fail there. The id
 * must be one of the list's own (`idPrefix`, as `newId` makes them): an activity list's cursor
 * given to the metrics list is refused, not read as a position in it.
 */
export function decodeLocalTimeCursor(cursor: string, idPrefix: "act" | "met"): [at: string, id: string] {
  const [at, id] = decodeCursor(cursor, 2) as [string, string];
  const m = PG_LOCAL_TIMESTAMP.exec(at);
  if (!m || !isValidLocalDateTime(`${m[1]}T${m[2]}`) || !id.startsWith(`${idPrefix}_`)) throw invalidCursor();
  return [at, id];
}

/** Fetch `limit + 1` rows; this trims the extra and makes the cursor from the last kept row. */
export function page<T>(rows: T[], limit: number, keyOf: (row: T) => string[]) {
  const more = rows.length > limit;
  const data = more ? rows.slice(0, limit) : rows;
  const last = data[data.length - 1];
  return { data, next_cursor: more && last ? encodeCursor(keyOf(last)) : null };
}
