import { describe, expect, it } from "vitest";
import { describeSource, recordRows } from "./activity-record";

describe("the Record card", () => {
  const activity = {
    id: "act_7hQ2mN4rT1vB8kL3pZaX9c",
    source: "upload",
    created_at: "2026-03-01T06:31:00Z",
    updated_at: "2026-03-02T18:05:00Z",
  };

  it("says where the activity came from and when, and shows no id, which tells a person nothing", () => {
    const rows = recordRows(activity, "Europe/Oslo");
    expect(rows.map(([label]) => label)).toEqual(["Source", "Created", "Last changed"]);
    expect(rows[0]![1]).toBe("Uploaded file");
    for (const [label, value] of rows) {
      expect(label).not.toMatch(/\bid\b/i);
      expect(value).not.toContain(activity.id);
    }
  });

  it("names each source in words", () => {
    expect(describeSource("manual")).toBe("Recorded by hand");
    expect(describeSource("upload")).toBe("Uploaded file");
    expect(describeSource("demo-training-log")).toBe("Added by an app (demo-training-log)");
  });
});
