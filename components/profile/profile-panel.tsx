"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ConsoleApiError, consoleFetch } from "@/components/console/api";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { Field, SelectField } from "@/components/ui/field";
import { Form } from "@/components/ui/form";
import { FormError } from "@/components/ui/form-error";
import { Notice } from "@/components/ui/notice";
import type { AthleteWire } from "@/lib/athletes/schemas";
import { profileChanges, profileFormValues } from "./profile-changes";
import { zoneLabel } from "./zone-label";
import { PROFILE_KEY, useProfile } from "./use-profile";

/** Name, timezone and units: how the console addresses the athlete and shows their data. */
export function ProfilePanel({ timezones }: { timezones: string[] }) {
  const profile = useProfile();
  return (
    <Card>
      {profile.isPending && <p className="text-sm text-slate-500">Loading…</p>}
      {profile.error && <Notice tone="error">{profile.error.message}</Notice>}
      {/* Keyed so the form starts from the saved profile once it has loaded. */}
      {profile.data && <ProfileForm key={profile.data.id} profile={profile.data} timezones={timezones} />}
    </Card>
  );
}

function ProfileForm({ profile, timezones }: { profile: AthleteWire; timezones: string[] }) {
  const qc = useQueryClient();
  const start = profileFormValues(profile);
  const [name, setName] = useState(start.name);
  const [timezone, setTimezone] = useState(start.timezone);
  const [metric, setMetric] = useState(start.uses_metric_units);
  const [saved, setSaved] = useState(false);
  const save = useMutation({
    mutationFn: () =>
      consoleFetch<AthleteWire>("/api/console/profile", {
        method: "PATCH",
        // Only what changed: `profile` is the profile as last saved (onSuccess sets it).
        body: profileChanges(profile, { name, timezone, uses_metric_units: metric }),
      }),
    onSuccess: (updated) => {
      qc.setQueryData(PROFILE_KEY, updated);
      setSaved(true);
    },
  });
  const fields = save.error instanceof ConsoleApiError ? save.error.fields : {};
  // A zone the list no longer names (an old alias) stays choosable rather than silently changing.
  const zones = timezones.includes(timezone) ? timezones : [timezone, ...timezones];
  const changed = () => {
    setSaved(false);
    save.reset();
  };

  return (
    <Form
      noValidate
      failure={save.error}
      className="max-w-lg space-y-5"
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      {saved && <Notice tone="success">Profile saved.</Notice>}
      <FormError error={save.error} shown={["name", "timezone", "uses_metric_units"]} />
      <Field
        label="Name"
        value={name}
        autoComplete="name"
        maxLength={100}
        error={fields.name}
        onChange={(e) => {
          setName(e.target.value);
          changed();
        }}
      />
      <div className="space-y-1">
        <p className="text-sm font-medium text-slate-700">Email</p>
        <p className="text-sm text-slate-600">{profile.email}</p>
      </div>
      <SelectField
          label="Timezone"
          value={timezone}
          error={fields.timezone}
          hint="Activity times are the wall-clock time where you were; this zone is how apps read them."
          onChange={(e) => {
            setTimezone(e.target.value);
            changed();
          }}
        >
          {zones.map((z) => (
            <option key={z} value={z}>
              {zoneLabel(z)}
            </option>
          ))}
        </SelectField>
      <fieldset className="space-y-2">
        <legend className="text-sm font-medium text-slate-700">Units</legend>
        {fields.uses_metric_units && <p className="text-sm text-red-700">{fields.uses_metric_units}</p>}
        <div className="grid gap-2 sm:grid-cols-2">
          {[
            { value: true, label: "Metric", detail: "Kilometres, km/h, metres" },
            { value: false, label: "Imperial", detail: "Miles, minutes per mile, feet" },
          ].map((o) => (
            <label
              key={o.label}
              className={`flex cursor-pointer items-start gap-2 rounded-md border p-3 text-sm ${metric === o.value ? "border-brand-500 bg-brand-50" : "border-slate-200"}`}
            >
              <input
                type="radio"
                name="units"
                className="mt-0.5"
                checked={metric === o.value}
                onChange={() => {
                  setMetric(o.value);
                  changed();
                }}
                aria-label={o.label}
                aria-describedby={`units-${o.label}`}
              />
              <span>
                <span className="font-medium">{o.label}</span>
                <span id={`units-${o.label}`} className="block text-slate-600">
                  {o.detail}
                </span>
              </span>
            </label>
          ))}
        </div>
      </fieldset>
      <Button type="submit" disabled={save.isPending}>
        Save
      </Button>
    </Form>
  );
}
