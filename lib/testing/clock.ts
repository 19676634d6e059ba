/**
 * Waits, when the wall clock is within `marginMs` of the end of an epoch-aligned window of
 * `windowMs` (the rate limits' 15-minute slots by default, which end on :00, :15, :30 and :45,
 * and so at midnight too), until the next window has begun. A test that counts requests in one
 * window and then expects a refusal calls it first, so that a slot ending halfway cannot reset
 * its count. Tests that can pass a clock of their own pass a fixed one instead.
 */
export async function awayFromWindowEdge(windowMs = 900_000, marginMs = 5_000): Promise<void> {
  const toEdge = windowMs - (Date.now() % windowMs);
  if (toEdge < marginMs) await new Promise((r) => setTimeout(r, toEdge + 100));
}
