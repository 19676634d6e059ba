import { Decoder, Stream } from "@garmin/fitsdk";
import { expect } from "vitest";

/**
 * A FIT file the service wrote, read with fitsdk's own Decoder, which must find it whole: a FIT
 * header, both CRCs right, and no error while reading it. For tests.
 */
export function decodeFitStrictly(bytes: Uint8Array) {
  const decoder = new Decoder(Stream.fromByteArray(Array.from(bytes)));
  expect(decoder.isFIT()).toBe(true);
  expect(decoder.checkIntegrity()).toBe(true);
  const { messages, errors } = decoder.read();
  expect(errors).toEqual([]);
  return messages;
}
