import type { AthleteWire } from "@/lib/athletes/schemas";

export type ProfileFormValues = { name: string; timezone: string; uses_metric_units: boolean };

/** The form's starting values: the saved profile's, with what the form shows for a field unset. */
export function profileFormValues(saved: AthleteWire): ProfileFormValues {
  return { name: saved.name ?? "", timezone: saved.timezone ?? "UTC", uses_metric_units: saved.uses_metric_units };
}

/**
 * The PATCH body for the profile form: only the fields the person changed. A value saved before
 * a rule that now refuses it (a zone's other name such as `US/Eastern`, a name the checks now
 * refuse) is not sent back unchanged, so it never blocks saving another field; it is checked when
 * the person edits it.
 */
export function profileChanges(saved: AthleteWire, form: ProfileFormValues): Partial<ProfileFormValues> {
  const before = profileFormValues(saved);
  const changes: Partial<ProfileFormValues> = {};
  if (form.name !== before.name) changes.name = form.name;
  if (form.timezone !== before.timezone) changes.timezone = form.timezone;
  if (form.uses_metric_units !== before.uses_metric_units) changes.uses_metric_units = form.uses_metric_units;
  return changes;
}
