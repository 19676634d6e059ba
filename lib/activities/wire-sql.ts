import { sql } from "drizzle-orm";
import { ACTIVITY_WIRE_FIELDS, type WireEncoding } from "./to-wire";

const ISO_UTC = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"';
const ISO_LOCAL = 'YYYY-MM-DD"T"HH24:MI:SS';

const encode: Record<WireEncoding, (column: (typeof ACTIVITY_WIRE_FIELDS)[number]["column"]) => ReturnType<typeof sql>> = {
  plain: (c) => sql`${c}`,
  local: (c) => sql`to_char(${c}, ${sql.raw(`'${ISO_LOCAL}'`)})`,
  instant: (c) => sql`to_char(${c} at time zone 'UTC', ${sql.raw(`'${ISO_UTC}'`)})`,
};

/**
 * An activity's wire form (`ActivityWire`), as JSON text built by PostgreSQL: the same object
 * `toActivityWire` makes in JavaScript, key for key and byte for byte, from the same field list
 * (a test compares the two on the same rows). Lists use it so that fifty rows are not decoded,
 * mapped and re-encoded one field at a time. Written by concatenation rather than
 * `json_build_object`, whose text puts spaces around every colon: every answer is compact JSON.
 * Keys are written into the statement, not sent as parameters: they are the schema's own
 * snake_case names, and the statement's text stays one prepared plan.
 */
export const activityWireJson = sql<string>`(${sql.join(
  ACTIVITY_WIRE_FIELDS.map(({ field, column, encoding }, i) => {
    if (!/^[a-z0-9_]+$/.test(field)) throw new Error(`Activity field ${field} is not a plain snake_case name`);
    return sql`${sql.raw(`'${i === 0 ? "{" : ","}"${field}":'`)} || coalesce(to_json(${encode[encoding](column)})::text, 'null')`;
  }),
  sql` || `,
)} || '}')`;
