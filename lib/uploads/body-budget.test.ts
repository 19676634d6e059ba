import { afterEach, describe, expect, it, vi } from "vitest";
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
    r1.release();
    const rBig = (await big)!;
    const rSmall = (await small)!;
    expect(order).toEqual(["big", "small"]);
    expect(b.available).toBe(0);
    rBig.release();
    rBig.release(); // a second release gives nothing back twice
    expect(b.available).toBe(70);
    rSmall.release();
    expect(b.available).toBe(100);
  });

  it("caps a reservation at the whole budget, so one request always fits alone; a size that is no number counts as all of it", async () => {
    const b = new ByteBudget(100);
    for (const size of [1_000, Number.NaN, Infinity]) {
      const r = (await b.reserve(size, 10))!;
      expect(b.available).toBe(0);
      r.release();
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
    r.release();
    held.release();
    expect(b.available).toBe(100);
    expect(b.waiting).toBe(0);
  });

  describe("a body that hardly arrives while others wait", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it("gives up its room when, at its pace over the window, the rest would not arrive within the wait; a steady one and a finished one keep theirs", async () => {
      vi.useFakeTimers();
      const b = new ByteBudget(100, { slowWindowMs: 1_000, finishWithinMs: 6_000 });
      const stalled = (await b.reserve(40, 60_000))!;
      const steady = (await b.reserve(40, 60_000))!;
      const finished = (await b.reserve(20, 60_000))!;
      finished.received(20);
      finished.finished();
      stalled.received(5); // a start, then nothing
      let granted = false;
      const waiter = b.reserve(30, 60_000).then((r) => ((granted = true), r));
      expect(b.waiting).toBe(1);
      // The steady body brings 1 a tick (10 a window): its 35 remaining need 3.5 windows, within 6.
      for (let t = 0; t < 12; t++) {
        steady.received(1);
        await vi.advanceTimersByTimeAsync(100);
      }
      expect(stalled.evicted.aborted).toBe(true);
      expect(steady.evicted.aborted).toBe(false);
      expect(finished.evicted.aborted).toBe(false);
      // Its room comes free when the request lets it go, and the waiter gets it.
      expect(granted).toBe(false);
      stalled.release();
      const r = (await waiter)!;
      expect(r).not.toBeNull();
      expect(b.available).toBe(10);
    });

    it("is never rushed when nobody waits", async () => {
      vi.useFakeTimers();
      const b = new ByteBudget(100, { slowWindowMs: 1_000, finishWithinMs: 6_000 });
      const slow = (await b.reserve(90, 60_000))!;
      await vi.advanceTimersByTimeAsync(30_000);
      expect(slow.evicted.aborted).toBe(false);
      // A waiter that gives up stops the watch; the window starts again with the next one.
      expect(await Promise.all([b.reserve(50, 500), vi.advanceTimersByTimeAsync(600)]).then(([r]) => r)).toBeNull();
      await vi.advanceTimersByTimeAsync(30_000);
      expect(slow.evicted.aborted).toBe(false);
      slow.release();
      expect(b.available).toBe(100);
    });
  });
});
