import { sql, type AnyColumn, type SQL } from "drizzle-orm";
import { ApiError } from "../../http/errors";
import { decodeCursor } from "../../http/pagination";

// Keyset cursors over a timestamptz carry it as whole microseconds since the epoch, computed by
// PostgreSQL: exact, where a JavaScript Date (milliseconds) would skip or repeat rows.

/** The column as epoch microseconds, as text, to select beside the row. */
export function epochMicros(column: AnyColumn): SQL<string> {
  return sql<string>`(extract(epoch from ${column}) * 1000000)::bigint::text`;
}

/** The instant a cursor's microseconds stand for, as a SQL expression. */
export function instantOf(micros: string): SQL {
  return sql`(timestamptz 'epoch' + ${micros}::bigint * interval '1 microsecond')`;
}

/** A `(epoch microseconds, id)` cursor; anything else is 400 `invalid_cursor`. */
export function decodeInstantCursor(cursor: string): [micros: string, id: string] {
  const [micros, id] = decodeCursor(cursor, 2) as [string, string];
  if (!/^\d{1,17}$/.test(micros)) {
    throw new ApiError("invalid_cursor", "The cursor is not one this API returned.", {
      errors: [{ field: "cursor", code: "invalid_cursor", detail: "not a cursor from this API" }],
    });
  }
  return [micros, id];
}
