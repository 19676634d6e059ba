import { describe, expect, it } from "vitest";
import { ByteBudget } from "./body-budget";

describe("ByteBudget", () => {
  it("grants what fits at once and makes the rest wait, first come first served, all or nothing", async () => {
    const b = new ByteBudget(100);
    const r1 = (await b.reserve(60, 10_000))!;
    expect(b.available).toBe(40);
    const order: string[] = [];
    const big = b.reserve(70, 10_000).then((r) => (order.push("big"), r));
    // Fits in what is free, but arrives behind one that waits: it waits too (no barging past it).
    const small = b.reserve(30, 10_000).then((r) => (order.push("small"), r));
    expect(b.waiting).toBe(2);
    expect(b.available).toBe(40); // nobody holds part of the budget while waiting
    r1();
    const rBig = (await big)!;
    const rSmall = (await small)!;
    expect(order).toEqual(["big", "small"]);
    expect(b.available).toBe(0);
    rBig();
    rBig(); // a second release gives nothing back twice
    expect(b.available).toBe(70);
    rSmall();
    expect(b.available).toBe(100);
  });

  it("caps a reservation at the whole budget, so one request always fits alone; a size that is no number counts as all of it", async () => {
    const b = new ByteBudget(100);
    for (const size of [1_000, Number.NaN, Infinity]) {
      const r = (await b.reserve(size, 10))!;
      expect(b.available).toBe(0);
      r();
      expect(b.available).toBe(100);
    }
  });

  it("gives up after the wait with null, and the one behind it still gets its turn", async () => {
    const b = new ByteBudget(100);
    const held = (await b.reserve(90, 10_000))!;
    const late = b.reserve(50, 20);
    const next = b.reserve(5, 10_000);
    expect(await late).toBeNull();
    // With the one ahead gone, the small one fits in what is free.
    const r = (await next)!;
    expect(b.available).toBe(5);
    r();
    held();
    expect(b.available).toBe(100);
    expect(b.waiting).toBe(0);
  });
});
