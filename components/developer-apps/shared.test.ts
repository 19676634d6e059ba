import { describe, expect, it } from "vitest";
import { appChanges } from "./shared";

describe("appChanges", () => {
  const app = { name: "Demo Training Log", redirect_uris: ["http://127.0.0.1:8976/callback", "http://localhost:3000/demo/callback"], logo_url: null, homepage_url: "http://localhost:3000/demo/callback" };
  const form = { name: app.name, redirect_uris: app.redirect_uris, logo_url: "", homepage_url: app.homepage_url };

  it("is empty when the form holds what the app has", () => {
    expect(appChanges(app, form)).toEqual({});
    expect(appChanges(app, { ...form, name: ` ${app.name} ` })).toEqual({});
  });

  it("names only what differs, so a rename does not send the homepage back to be checked again", () => {
    expect(appChanges(app, { ...form, name: "Renamed" })).toEqual({ name: "Renamed" });
    expect(appChanges(app, { ...form, redirect_uris: [...app.redirect_uris, "https://a.example/cb"] })).toEqual({
      redirect_uris: [...app.redirect_uris, "https://a.example/cb"],
    });
    expect(appChanges(app, { ...form, homepage_url: "" })).toEqual({ homepage_url: null });
    expect(appChanges(app, { ...form, logo_url: " https://a.example/l.png " })).toEqual({ logo_url: "https://a.example/l.png" });
  });
});
