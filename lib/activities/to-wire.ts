import type { PgColumn } from "drizzle-orm/pg-core";
import { activities } from "../db/schema";
import { toWireLocal } from "../time/local";
import { Activity, type ActivityWire } from "./schemas";

type WireField = keyof ActivityWire;

/** `elapsed_time_s` → `elapsedTimeS`: each wire field is the activity column of the same name. */
type ColumnKey<K extends string> = K extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<ColumnKey<Tail>>}` : K;

function columnKey<K extends WireField>(field: K): ColumnKey<K> {
  return field.replace(/_(.)/g, (_, c: string) => c.toUpperCase()) as ColumnKey<K>;
}

/**
 * How a column's value is written on the wire: a timestamp without time zone is local
 * wall-clock time (`2026-03-01T07:30:00`), one with a time zone an instant in UTC with
 * milliseconds; anything else as JSON has it.
 */
export type WireEncoding = "local" | "instant" | "plain";

function encodingOf(column: PgColumn): WireEncoding {
  if (column.columnType === "PgTimestamp" || column.columnType === "PgTimestampString") {
    return (column as PgColumn & { withTimezone: boolean }).withTimezone ? "instant" : "local";
  }
  return "plain";
}

/**
 * The activity's wire shape is the `Activity` schema alone: its fields, in its order, each read
 * from the column of the same name (indexing `activities` by the derived name fails the
 * typecheck if a field has none). `toActivityWire` and the SQL of `activityWireJson` are both
 * built from this, so adding a field is adding it to the schema, plus its column.
 */
export const ACTIVITY_WIRE_FIELDS = (Object.keys(Activity.shape) as WireField[]).map((field) => {
  const column: PgColumn = activities[columnKey(field)];
  return { field, key: columnKey(field), column, encoding: encodingOf(column) };
});

export function toActivityWire(a: typeof activities.$inferSelect): ActivityWire {
  const wire: Record<string, unknown> = {};
  for (const { field, key, encoding } of ACTIVITY_WIRE_FIELDS) {
    const value = a[key];
    wire[field] = encoding === "instant" ? (value as Date).toISOString() : encoding === "local" ? toWireLocal(value as string) : value;
  }
  // Every field of the schema was set above; `sport_type` holds what the schema accepted on the way in.
  return wire as ActivityWire;
}
