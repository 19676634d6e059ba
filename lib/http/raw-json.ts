/**
 * A response body that is already JSON text, assembled from JSON that PostgreSQL built (long
 * lists, where mapping every row and column in JavaScript would cost more than the query).
 * `handle()` sends it as it is; outside production it first checks it against the operation's
 * response schema, so the tests hold the SQL to the same schema as every other answer.
 */
const RAW_JSON = Symbol("rawJson");

export type RawJson = {
  readonly [RAW_JSON]: true;
  readonly text: string;
  /** The same JSON already encoded as UTF-8, sent as it is (a cached answer shared between requests). */
  readonly bytes?: Uint8Array;
};

export function rawJson(text: string): RawJson {
  return { [RAW_JSON]: true, text };
}

/** Raw JSON that is already UTF-8 bytes: `text` is decoded only if something reads it (the check outside production). */
export function rawJsonBytes(bytes: Uint8Array): RawJson {
  return {
    [RAW_JSON]: true,
    bytes,
    get text() {
      return new TextDecoder().decode(bytes);
    },
  };
}

export function isRawJson(value: unknown): value is RawJson {
  return typeof value === "object" && value !== null && RAW_JSON in value;
}
