import { describe, expect, it } from "vitest";
import { ConsoleApiError } from "@/components/console/api";
import { describeDownloadProblem, describeSaveProblem, downloadFoundItGone } from "./activity-problems";

const gone = new ConsoleApiError("Activity act_P8hxLtYHuMScCzZ125T3Qa was not found.", 404, "not_found");
const noTrack = new ConsoleApiError(
  "Activity act_1L5OBJptfmaW975Qw6ZVxP recorded no positions, and a GPX file is a track of them: export it as FIT or TCX.",
  404,
  "not_found",
);

describe("an action on an activity that is not there says so in words, without its id", () => {
  it("download: deleted meanwhile, or a GPX track of an activity without positions", () => {
    for (const format of ["fit", "gpx", "original"]) {
      expect(describeDownloadProblem(gone, format)).toBe("This activity is not here any more: it was deleted, so there is nothing to download.");
    }
    expect(describeDownloadProblem(noTrack, "gpx")).toMatch(/^This activity recorded no positions .*download it as FIT or TCX\.$/);
    for (const e of [gone, noTrack]) expect(describeDownloadProblem(e, "gpx")).not.toMatch(/act_/);
  });

  it("only a download refused because the activity is gone tells the page it is gone", () => {
    expect(downloadFoundItGone(gone, "fit")).toBe(true);
    expect(downloadFoundItGone(gone, "gpx")).toBe(true);
    expect(downloadFoundItGone(noTrack, "gpx")).toBe(false);
    expect(downloadFoundItGone(new ConsoleApiError("Too many requests.", 429, "rate_limited"), "fit")).toBe(false);
  });

  it("save: deleted meanwhile; any other refusal is kept as it is", () => {
    expect(describeSaveProblem(gone).message).toBe("This activity is not here any more: it was deleted, so the change could not be saved.");
    const invalid = new ConsoleApiError("Some fields need another look.", 422, "validation_failed", { name: "enter a name" });
    expect(describeSaveProblem(invalid)).toBe(invalid);
  });
});
