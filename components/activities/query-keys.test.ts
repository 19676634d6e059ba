import { QueryClient } from "@tanstack/react-query";
import { describe, expect, it } from "vitest";
import { ACTIVITIES_KEY, activitiesChanged, activityKey, SUMMARY_KEY } from "./query-keys";

describe("activitiesChanged", () => {
  it("refreshes what lists the activities, the list and the weekly volume, and no activity's detail", () => {
    const qc = new QueryClient();
    for (const key of [ACTIVITIES_KEY, SUMMARY_KEY, activityKey("act_1")]) qc.setQueryData(key, { cached: true });
    activitiesChanged(qc);
    const invalidated = (key: readonly unknown[]) => qc.getQueryState(key)!.isInvalidated;
    expect([invalidated(ACTIVITIES_KEY), invalidated(SUMMARY_KEY), invalidated(activityKey("act_1"))]).toEqual([true, true, false]);
  });
});
