import { describe, expect, it } from "vitest";
import { mayPoll, mayStartSending, type Phase } from "./upload-queue";

// Listed as the panel shows them: newest first, so `seq` counts down the list.
const items = (...phases: Phase[]) => phases.map((phase, i) => ({ key: `k${i}`, phase, seq: phases.length - i }));

describe("mayStartSending", () => {
  it("starts the files picked first (last in the list) up to the free slots", () => {
    expect([...mayStartSending(items("queued", "queued", "queued", "queued"), 3)].sort()).toEqual(["k1", "k2", "k3"]);
    expect([...mayStartSending(items("queued", "queued", "sending", "sent"), 3)].sort()).toEqual(["k0", "k1"]);
  });

  it("follows the order of picking, not of the list: one pick's files are shown in their own order under newer picks", () => {
    // One pick of a, b, c (seq 1, 2, 3), shown in that order: a is sent first.
    const pick = ["a", "b", "c"].map((key, i) => ({ key, phase: "queued" as const, seq: i + 1 }));
    expect([...mayStartSending(pick, 1)]).toEqual(["a"]);
    expect([...mayStartSending(pick, 2)].sort()).toEqual(["a", "b"]);
  });

  it("starts nothing while every slot is taken, and files already sent free theirs", () => {
    expect(mayStartSending(items("queued", "sending", "sending", "sending"), 3).size).toBe(0);
    expect([...mayStartSending(items("queued", "sent", "finished", "sending", "sending"), 3)]).toEqual(["k0"]);
  });
});

describe("mayPoll", () => {
  it("asks about the files processing that were picked first (last in the list), up to the limit, and none of the others", () => {
    expect([...mayPoll(items("sent", "queued", "sent", "sent", "finished", "sent"), 2)].sort()).toEqual(["k3", "k5"]);
    expect([...mayPoll(items("sending", "sent", "finished"), 2)]).toEqual(["k1"]);
    expect(mayPoll(items("queued", "sending", "finished"), 2).size).toBe(0);
  });

  it("gives the place of a file that stopped being asked about (its upload gone, the session ended) to the next one", () => {
    // Picked in the order k3, k2, k1, k0; the two picked first stopped.
    const list = items("sent", "sent", "sent", "sent").map((i) => ({ ...i, stopped: i.key === "k3" || i.key === "k2" }));
    expect([...mayPoll(list, 2)].sort()).toEqual(["k0", "k1"]);
    expect([...mayPoll(list.map((i) => ({ ...i, stopped: i.key === "k3" })), 2)].sort()).toEqual(["k1", "k2"]);
  });
});
