import { BODY_LENGTH_HEADER } from "../../scripts/body-length.mjs";

/**
 * Tells the front server (scripts/body-length.mjs) that the answer's body is `byteLength` bytes:
 * it goes out with Content-Length, and an answer under the compression threshold (1 KiB) is not
 * gzipped. Gzipping a 214-byte `/v1/athletes/me` answer for a client that accepts it had cost
 * more server CPU than the rest of the request (bench/README.md, "Small answers are not
 * compressed").
 */
export function tellBodyLength(headers: Headers, byteLength: number): Headers {
  headers.set(BODY_LENGTH_HEADER, String(byteLength));
  return headers;
}

const headersOf = (init?: HeadersInit): Headers => (init instanceof Headers ? init : new Headers(init));

/** A Response whose body is known in full, with its length told (above). */
export function knownLengthResponse(body: string | Uint8Array, init: { status?: number; headers?: HeadersInit } = {}): Response {
  const headers = tellBodyLength(headersOf(init.headers), typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);
  return new Response(body as string | Uint8Array<ArrayBuffer>, { status: init.status, headers });
}

/** `Response.json` with its length told (above). */
export function knownLengthJson(value: unknown, init: { status?: number; headers?: HeadersInit } = {}): Response {
  const headers = headersOf(init.headers);
  if (!headers.has("Content-Type")) headers.set("Content-Type", "application/json");
  return knownLengthResponse(JSON.stringify(value), { status: init.status, headers });
}
