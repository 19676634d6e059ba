import { describe, expect, it } from "vitest";
import { CreateActivityInput, UpdateActivityInput, type ActivityWire } from "@/lib/activities/schemas";
import { changedFields, emptyFormValues, FIELD_OF, formErrorsFromApi, readForm, toFormValues, withSport } from "./activity-form-values";

const activity: ActivityWire = {
  id: "act_1",
  athlete_id: "ath_1",
  name: "Easy run",
  sport_type: "run",
  start_local: "2026-03-01T07:30:00",
  elapsed_time_s: 3000,
  moving_time_s: 2900,
  distance_m: 10_000,
  elevation_gain_m: 42.5,
  average_speed_mps: 10_000 / 2900,
  max_speed_mps: 4.5,
  average_heart_rate_hz: 2.5,
  max_heart_rate_hz: 3,
  average_power_w: null,
  energy_j: 2_510_400,
  source: "garmin",
  created_at: "2026-03-01T10:00:00.000Z",
  updated_at: "2026-03-01T10:00:00.000Z",
};

describe("readForm", () => {
  it("converts imperial entries to SI", () => {
    const values = { ...emptyFormValues("UTC"), name: " Long run ", date: "2026-03-01", time: "07:30", duration: "1:20:00", distance: "10", elevation: "1000", avg_hr: "150", energy: "600" };
    const { input } = readForm(values, "imperial");
    expect(input).toMatchObject({
      name: "Long run",
      sport_type: "run",
      start_local: "2026-03-01T07:30:00",
      elapsed_time_s: 4800,
      moving_time_s: null,
      distance_m: 16_093.44,
      average_heart_rate_hz: 2.5,
      energy_j: 600 * 4184,
      average_power_w: null,
    });
    expect(input!.elevation_gain_m).toBeCloseTo(304.8, 6);
    // The API derives it from distance and time, not held to a max speed (createActivity).
    expect(input).not.toHaveProperty("average_speed_mps");
  });

  it("reads decimal numbers only: a hex, binary or exponent literal is not a number a person types", () => {
    for (const distance of ["0x10", "0b11", "0o7", "1e3", "Infinity", "1.2.3", "."]) {
      expect(readForm({ ...emptyFormValues("UTC"), name: "Run", duration: "30", distance }, "metric").errors, distance).toEqual({ distance: "Enter a number." });
    }
    for (const [distance, m] of [["10", 10_000], ["10.5", 10_500], ["10,5", 10_500], [".5", 500], ["5.", 5_000], ["+2", 2_000]] as const) {
      expect(readForm({ ...emptyFormValues("UTC"), name: "Run", duration: "30", distance }, "metric").input?.distance_m, distance).toBeCloseTo(m, 6);
    }
  });

  it("names each field it cannot read", () => {
    const { errors } = readForm({ ...emptyFormValues("UTC"), date: "", duration: "soon", distance: "far", max_hr: "-1" }, "metric");
    expect(errors).toEqual({
      name: "Enter a name.",
      date: "Pick a date.",
      duration: "Use h:mm:ss, m:ss or a number of minutes.",
      distance: "Enter a number.",
      max_hr: "Must be zero or more.",
    });
  });

  it("says a duration of zero is too short, and takes a moving time of zero", () => {
    const values = { ...emptyFormValues("UTC"), name: "Zero", duration: "0", moving_time: "0:00", distance: "0" };
    expect(readForm(values, "metric").errors).toEqual({ duration: "Must be longer than zero." });
    expect(readForm({ ...values, duration: "30" }, "metric").input).toMatchObject({ elapsed_time_s: 1800, moving_time_s: 0, distance_m: 0 });
  });
});

describe("emptyFormValues", () => {
  it("starts at the current minute on the athlete's clock", () => {
    const v = emptyFormValues("America/New_York", new Date("2026-03-01T02:30:00Z"));
    expect([v.date, v.time]).toEqual(["2026-02-28", "21:30"]);
  });
});

describe("editing", () => {
  it("round-trips an activity through the form in both unit systems", () => {
    for (const units of ["metric", "imperial"] as const) {
      const values = toFormValues(activity, units);
      const { input } = readForm(values, units);
      expect(input!.distance_m).toBeCloseTo(10_000, -1);
      expect(input!.elapsed_time_s).toBe(3000);
      expect(input!.start_local).toBe(activity.start_local);
      expect(input!.average_heart_rate_hz).toBe(2.5);
    }
  });

  it("sends only what changed, and leaves the average speed to the API, which derives it again when distance changed", () => {
    const before = toFormValues(activity, "imperial");
    const after = { ...before, name: "Tempo run", distance: "7" };
    const patch = changedFields(before, after, readForm(after, "imperial").input!, "imperial");
    expect(Object.keys(patch).sort()).toEqual(["distance_m", "name"]);
    expect(patch.distance_m).toBeCloseTo(11_265.4, 1);
  });

  it("sends nothing when nothing changed, and null when a measurement is cleared", () => {
    const before = toFormValues(activity, "metric");
    expect(changedFields(before, before, readForm(before, "metric").input!, "metric")).toEqual({});
    const after = { ...before, max_hr: "" };
    expect(changedFields(before, after, readForm(after, "metric").input!, "metric")).toEqual({ max_heart_rate_hz: null });
  });
});

describe("a swim's distance", () => {
  const swim: ActivityWire = { ...activity, name: "Pool", sport_type: "swim", distance_m: 1500, elevation_gain_m: null };

  it("is in metres or yards, as its page reads it, both ways", () => {
    expect(toFormValues(swim, "metric").distance).toBe("1500");
    expect(toFormValues(swim, "imperial").distance).toBe("1640");
    const typed = { ...emptyFormValues("UTC"), name: "Pool", sport_type: "swim" as const, duration: "40", distance: "1640" };
    expect(readForm(typed, "imperial").input!.distance_m).toBeCloseTo(1640 * 0.9144, 6);
    expect(readForm({ ...typed, distance: "1500" }, "metric").input!.distance_m).toBe(1500);
    // A range error names its limit in the same unit.
    expect(formErrorsFromApi({ distance_m: "Too big: expected number to be <=1000000" }, "metric", "swim")).toEqual({ distance: "Must be at most 1000000 m." });
  });

  it("is read with the thousands comma the page writes it with (1,500 m), where a comma elsewhere is a decimal mark", () => {
    const typed = { ...emptyFormValues("UTC"), name: "Pool", sport_type: "swim" as const, duration: "40", distance: "1,500" };
    expect(readForm(typed, "metric").input!.distance_m).toBe(1500);
    expect(withSport(typed, "run", "metric").distance).toBe("1.5");
    expect(readForm({ ...typed, sport_type: "run", distance: "1,5" }, "metric").input!.distance_m).toBe(1500);
    expect(readForm({ ...typed, distance: "1,5" }, "metric").input!.distance_m).toBe(1.5);
  });

  it("changed only by a change of sport is not sent: the stored distance (and the device's average speed) stand", () => {
    for (const units of ["metric", "imperial"] as const) {
      for (const [from, to, distance_m] of [
        ["run", "swim", 2012.34],
        ["swim", "run", 1500],
      ] as const) {
        const before = toFormValues({ ...activity, sport_type: from, distance_m }, units);
        const after = withSport(before, to, units);
        expect(after.distance, `${units} ${from}`).not.toBe(before.distance);
        expect(changedFields(before, after, readForm(after, units).input!, units), `${units} ${from}`).toEqual({ sport_type: to });
        // Typed after the change, it is sent.
        const typed = { ...after, distance: to === "swim" ? "2100" : "2.1" };
        expect(changedFields(before, typed, readForm(typed, units).input!, units)).toHaveProperty("distance_m");
      }
    }
  });

  it("is carried over when the sport changes to or from a swim, so the figure keeps its meaning", () => {
    const run = { ...emptyFormValues("UTC"), distance: "1.5" };
    const asSwim = withSport(run, "swim", "metric");
    expect(asSwim).toEqual({ ...run, sport_type: "swim", distance: "1500" });
    expect(withSport(asSwim, "ride", "metric").distance).toBe("1.5");
    expect(withSport({ ...run, distance: "1" }, "swim", "imperial").distance).toBe("1760");
    // Between sports of one unit, and for text that is no number, it stays as typed.
    expect(withSport(run, "ride", "metric").distance).toBe("1.5");
    expect(withSport({ ...run, distance: "far" }, "swim", "metric").distance).toBe("far");
    expect(withSport({ ...run, distance: "" }, "swim", "metric").distance).toBe("");
  });
});

describe("formErrorsFromApi", () => {
  it("moves the API's field errors onto the form's fields", () => {
    expect(formErrorsFromApi({ distance_m: "too far", start_local: "bad date", body: "x" }, "metric", "run")).toEqual({
      distance: "too far",
      date: "bad date",
    });
  });

  it("words a pair's rule as the form names its fields, with or without the stored value the API adds", () => {
    expect(
      formErrorsFromApi(
        {
          moving_time_s: "moving_time_s must not exceed elapsed_time_s: 1801 s against the activity's 1800 s",
          max_heart_rate_hz: "max_heart_rate_hz must not be below average_heart_rate_hz",
          max_speed_mps: "max_speed_mps must not be below average_speed_mps: the activity's 3 m/s against 2.9 m/s",
        },
        "metric",
        "run",
      ),
    ).toEqual({
      moving_time: "Must be no longer than the duration.",
      max_hr: "Must be at least the average heart rate.",
      max_speed: "Must be at least the average speed.",
    });
  });

  it("words a pair's rule for the member a change sent alone, and a derived average speed over its bound", () => {
    expect(
      formErrorsFromApi(
        {
          elapsed_time_s: "moving_time_s must not exceed elapsed_time_s: the activity's 1500 s against 1499 s",
          average_heart_rate_hz: "max_heart_rate_hz must not be below average_heart_rate_hz: 3.5 Hz against the activity's 3 Hz",
          distance_m: "distance_m over elapsed_time_s is 1000000 m/s (1000000 m in 1 s), above the 100 m/s any speed may be",
        },
        "metric",
        "run",
      ),
    ).toEqual({
      duration: "Must be at least the moving time.",
      avg_hr: "Must be at most the max heart rate.",
      distance: "Gives an average speed over 360 km/h: check the distance and the times.",
    });
  });

  it("states a range error's limit in the athlete's units", () => {
    expect(
      formErrorsFromApi(
        {
          max_heart_rate_hz: "Too big: expected number to be <=5",
          distance_m: "Too big: expected number to be <=1000000",
          elevation_gain_m: "Too small: expected number to be >=0",
          elapsed_time_s: "Too big: expected number to be <=2592000",
          energy_j: "Too big: expected number to be <=100000000",
        },
        "imperial",
        "run",
      ),
    ).toEqual({
      max_hr: "Must be at most 300 bpm.",
      // 621.37 mi and 23,900.57 kcal: rounded to a number the form takes, not to the nearest (621.4 and 23901 are over).
      distance: "Must be at most 621.3 mi.",
      elevation: "Must be at least 0 ft.",
      duration: "Must be at most 720:00:00.",
      energy: "Must be at most 23900 kcal.",
    });
    expect(formErrorsFromApi({ average_power_w: "Too small: expected number to be >=10.2" }, "metric", "ride")).toEqual({ power: "Must be at least 11 W." });
  });
});

describe("the API's input", () => {
  // Typed from CreateActivityInput, so a new field fails the typecheck here first; this says so
  // at run time too, from the schemas' own keys.
  it("is what the form sends (but the average speed the API derives), and each of its fields has a form field for its errors", () => {
    const values = { ...emptyFormValues("UTC"), name: "Run", duration: "30" };
    const { input } = readForm(values, "metric");
    const fields = Object.keys(CreateActivityInput.shape);
    expect(Object.keys(input!).sort()).toEqual(fields.filter((f) => f !== "average_speed_mps").sort());
    expect(CreateActivityInput.safeParse(input).success).toBe(true);
    for (const field of new Set([...fields, ...Object.keys(UpdateActivityInput.shape)])) expect(FIELD_OF, field).toHaveProperty(field);
  });
});
