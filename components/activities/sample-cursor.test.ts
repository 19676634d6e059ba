import { describe, expect, it } from "vitest";
import { createSampleCursor } from "./sample-cursor";

describe("createSampleCursor", () => {
  it("tells its listeners of a change only, and stops telling one that unsubscribed", () => {
    const cursor = createSampleCursor();
    const seen: (number | null)[] = [];
    const stop = cursor.subscribe(() => seen.push(cursor.get()));
    cursor.set(3);
    cursor.set(3);
    cursor.set(null);
    stop();
    cursor.set(5);
    expect(seen).toEqual([3, null]);
    expect(cursor.get()).toBe(5);
  });
});
