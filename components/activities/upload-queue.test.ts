import { describe, expect, it } from "vitest";
import { mayPoll, mayStartSending, type Phase } from "./upload-queue";

const items = (...phases: Phase[]) => phases.map((phase, i) => ({ key: `k${i}`, phase, size: 1000 + i }));
const sized = (...list: [Phase, number][]) => list.map(([phase, size], i) => ({ key: `k${i}`, phase, size }));

describe("mayStartSending", () => {
  it("starts the oldest queued files (last in the list) up to the free slots", () => {
    expect([...mayStartSending(items("queued", "queued", "queued", "queued"), 3)].sort()).toEqual(["k1", "k2", "k3"]);
    expect([...mayStartSending(items("queued", "queued", "sending", "sent"), 3)].sort()).toEqual(["k0", "k1"]);
  });

  it("starts nothing while every slot is taken, and files already sent free theirs", () => {
    expect(mayStartSending(items("queued", "sending", "sending", "sending"), 3).size).toBe(0);
    expect([...mayStartSending(items("queued", "sent", "finished", "sending", "sending"), 3)]).toEqual(["k0"]);
  });

  it("holds a file back while an older one of the same size (perhaps the same bytes) is sending, so the one picked first is the original", () => {
    // Picked together: k2 (oldest) and k0 the same size; k1 another.
    expect([...mayStartSending(sized(["queued", 500], ["queued", 700], ["queued", 500]), 3)].sort()).toEqual(["k1", "k2"]);
    expect([...mayStartSending(sized(["queued", 500], ["sent", 700], ["sending", 500]), 3)]).toEqual([]);
    expect([...mayStartSending(sized(["queued", 500], ["sent", 700], ["sent", 500]), 3)]).toEqual(["k0"]);
    // Waiting does not take a slot from a younger file of another size.
    expect([...mayStartSending(sized(["queued", 900], ["queued", 500], ["sending", 500]), 2)]).toEqual(["k0"]);
  });
});

describe("mayPoll", () => {
  it("asks about the oldest files processing (last in the list), up to the limit, and none of the others", () => {
    expect([...mayPoll(items("sent", "queued", "sent", "sent", "finished", "sent"), 2)].sort()).toEqual(["k3", "k5"]);
    expect([...mayPoll(items("sending", "sent", "finished"), 2)]).toEqual(["k1"]);
    expect(mayPoll(items("queued", "sending", "finished"), 2).size).toBe(0);
  });
});
