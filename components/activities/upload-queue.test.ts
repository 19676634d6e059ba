import { describe, expect, it } from "vitest";
import { mayPoll, mayStartSending, type Phase } from "./upload-queue";

const items = (...phases: Phase[]) => phases.map((phase, i) => ({ key: `k${i}`, phase }));

describe("mayStartSending", () => {
  it("starts the oldest queued files (last in the list) up to the free slots", () => {
    expect([...mayStartSending(items("queued", "queued", "queued", "queued"), 3)].sort()).toEqual(["k1", "k2", "k3"]);
    expect([...mayStartSending(items("queued", "queued", "sending", "sent"), 3)].sort()).toEqual(["k0", "k1"]);
  });

  it("starts nothing while every slot is taken, and files already sent free theirs", () => {
    expect(mayStartSending(items("queued", "sending", "sending", "sending"), 3).size).toBe(0);
    expect([...mayStartSending(items("queued", "sent", "finished", "sending", "sending"), 3)]).toEqual(["k0"]);
  });
});

describe("mayPoll", () => {
  it("asks about the oldest files processing (last in the list), up to the limit, and none of the others", () => {
    expect([...mayPoll(items("sent", "queued", "sent", "sent", "finished", "sent"), 2)].sort()).toEqual(["k3", "k5"]);
    expect([...mayPoll(items("sending", "sent", "finished"), 2)]).toEqual(["k1"]);
    expect(mayPoll(items("queued", "sending", "finished"), 2).size).toBe(0);
  });
});
