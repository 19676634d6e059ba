import { describe, expect, it } from "vitest";
import { contentDisposition } from "@/lib/http/file-body";
import { fileNameFromDisposition } from "./files-api";

describe("the name a downloaded file is saved under", () => {
  it("is the exact name of filename*, whatever the activity is called", () => {
    for (const name of ["Tour-de-Østfold-day-2-2026-03-01.fit", 'Quote "and" back\\slash.gpx', "a;filename*=UTF-8''evil.exe.tcx", "100% 𝐀.fit"]) {
      expect(fileNameFromDisposition(contentDisposition(name))).toBe(name);
    }
  });

  it("falls back to filename when filename* is missing or unreadable (RFC 6266 §4.3)", () => {
    expect(fileNameFromDisposition('attachment; filename="Morning-Ride.tcx.gz"')).toBe("Morning-Ride.tcx.gz");
    expect(fileNameFromDisposition("attachment; filename=run.fit")).toBe("run.fit");
    expect(fileNameFromDisposition(`attachment; filename="run.fit"; filename*=UTF-8''%E0%A4`)).toBe("run.fit");
    expect(fileNameFromDisposition(`attachment; filename="a\\"b.gpx"`)).toBe('a"b.gpx');
  });

  it("is null when the answer names no file", () => {
    expect(fileNameFromDisposition(null)).toBeNull();
    expect(fileNameFromDisposition("attachment")).toBeNull();
    expect(fileNameFromDisposition('attachment; filename=""')).toBeNull();
  });
});
