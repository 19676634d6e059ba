/**
 * A response body that is already JSON text, assembled from JSON that PostgreSQL built (long
 * lists, where mapping every row and column in JavaScript would cost more than the query).
 * `handle()` sends it as it is; outside production it first checks it against the operation's
 * response schema, so the tests hold the SQL to the same schema as every other answer.
 */
const RAW_JSON = Symbol("rawJson");

export type RawJson = { readonly [RAW_JSON]: true; readonly text: string };

export function rawJson(text: string): RawJson {
  return { [RAW_JSON]: true, text };
}

export function isRawJson(value: unknown): value is RawJson {
  return typeof value === "object" && value !== null && RAW_JSON in value;
}
