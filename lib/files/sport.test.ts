import { describe, expect, it } from "vitest";
import { fitSport, gpxSport, tcxSport } from "./sport";

// The sport mapping of CONTRACT §11, case by case, with fitsdk's names for the FIT enums.
describe("sports", () => {
  it.each([
    ["running", "generic", "run"],
    ["running", "trail", "trail_run"],
    ["cycling", "road", "ride"],
    ["cycling", "indoorCycling", "virtual_ride"],
    ["cycling", "virtualActivity", "virtual_ride"],
    ["swimming", "lapSwimming", "swim"],
    ["walking", undefined, "walk"],
    ["hiking", undefined, "hike"],
    ["rowing", undefined, "row"],
    ["fitnessEquipment", "indoorRowing", "row"],
    ["alpineSkiing", "downhill", "ski"],
    ["crossCountrySkiing", "skateSkiing", "ski"],
    ["waterSkiing", "generic", "ski"],
    ["training", "strengthTraining", "strength"],
    ["training", "yoga", "yoga"],
    ["training", "cardioTraining", "other"],
    ["standUpPaddleboarding", "generic", "other"],
    [99, 12, "other"],
    [undefined, undefined, "other"],
  ])("FIT %s / %s is %s", (sport, sub, expected) => {
    expect(fitSport(sport, sub)).toBe(expected);
  });

  it.each([
    ["Running", "run"],
    ["Biking", "ride"],
    ["Other", "other"],
    [undefined, "other"],
  ])("TCX %s is %s", (sport, expected) => {
    expect(tcxSport(sport)).toBe(expected);
  });

  it.each([
    ["running", "run"],
    ["Run", "run"],
    ["9", "run"],
    ["cycling", "ride"],
    ["biking", "ride"],
    ["ride", "ride"],
    ["1", "ride"],
    ["hiking", "hike"],
    ["4", "hike"],
    ["walking", "walk"],
    ["10", "walk"],
    ["swimming", "swim"],
    [" running ", "run"],
    ["paragliding", "other"],
    [null, "other"],
  ])("GPX type %s is %s", (type, expected) => {
    expect(gpxSport(type)).toBe(expected);
  });
});
