import { describe, expect, it } from "vitest";
import { Athlete, type AthleteWire } from "@/lib/athletes/schemas";
import { UpdateProfileInput } from "@/lib/athletes/update-profile";
import { profileChanges, profileFormValues } from "./profile-changes";

const saved: AthleteWire = {
  id: "ath_1",
  name: "Ava Lindqvist",
  email: "ava@example.com",
  timezone: "US/Eastern", // stored before the service named each zone once: refused if sent now
  has_subscription: false,
  trial_ends_at: null,
  uses_metric_units: true,
  connected_integrations: [],
};

describe("profileChanges", () => {
  it("sends only the fields changed, so a stored value the rules now refuse never blocks saving another", () => {
    const changes = profileChanges(saved, { ...profileFormValues(saved), uses_metric_units: false });
    expect(changes).toEqual({ uses_metric_units: false });
    // The body the service gets is valid: the old zone name is not in it.
    expect(UpdateProfileInput.safeParse(changes).success).toBe(true);
    expect(UpdateProfileInput.safeParse({ ...profileFormValues(saved), uses_metric_units: false }).success).toBe(false);
  });

  it("sends an edited field even when it is refused (the person sees why), and nothing when nothing changed", () => {
    expect(profileChanges(saved, { ...profileFormValues(saved), name: "" })).toEqual({ name: "" });
    expect(profileChanges(saved, { ...profileFormValues(saved), timezone: "America/New_York", name: " Ava " })).toEqual({ timezone: "America/New_York", name: " Ava " });
    expect(profileChanges(saved, profileFormValues(saved))).toEqual({});
  });

  it("starts a profile without name or zone from what the form shows, and leaves them unset unless edited", () => {
    const bare = Athlete.parse({ ...saved, name: null, timezone: null });
    expect(profileFormValues(bare)).toEqual({ name: "", timezone: "UTC", uses_metric_units: true });
    expect(profileChanges(bare, { name: "", timezone: "UTC", uses_metric_units: false })).toEqual({ uses_metric_units: false });
  });
});
