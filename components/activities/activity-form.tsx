"use client";

import { useState, type InputHTMLAttributes } from "react";
import { ConsoleApiError } from "@/components/console/api";
import { Button } from "@/components/ui/button";
import { Field, SelectField } from "@/components/ui/field";
import { Form } from "@/components/ui/form";
import { Notice } from "@/components/ui/notice";
import { FIELD_OF, formErrorsFromApi, readForm, withSport, type ActivityInput, type FormErrors, type FormField, type FormValues } from "./activity-form-values";
import { distanceUnit } from "./chart-series";
import { SPORT_LABELS, SPORTS, type SportType } from "./sport";
import { UNIT_LABELS, type Units } from "./units";

type Props = {
  initial: FormValues;
  units: Units;
  pending: boolean;
  /** The last answer from the API, shown on the fields it names. */
  error: Error | null;
  onSubmit: (input: ActivityInput, values: FormValues) => void;
  onCancel: () => void;
};

/** Record or edit an activity in the athlete's units; the caller gets SI values. */
export function ActivityForm({ initial, units, pending, error, onSubmit, onCancel }: Props) {
  const [values, setValues] = useState(initial);
  const [local, setLocal] = useState<FormErrors>({});
  // An API answer stays on the page until the next submit, not after it.
  const [dismissed, setDismissed] = useState<Error | null>(null);
  const apiError = error && error !== dismissed ? error : null;
  const fromApi = apiError instanceof ConsoleApiError ? formErrorsFromApi(apiError.fields, units, values.sport_type) : {};
  const errors = { ...fromApi, ...local };
  // The API's summary names SI fields; when every error sits on a field, the fields say it better.
  const fieldLevel =
    Object.keys(local).length > 0 ||
    (apiError instanceof ConsoleApiError &&
      Object.keys(apiError.fields).length > 0 &&
      Object.keys(apiError.fields).every((f) => f in FIELD_OF));
  const u = UNIT_LABELS[units];
  const distance = distanceUnit(values.sport_type, units);

  const bind = (field: FormField): InputHTMLAttributes<HTMLInputElement> & { error?: string } => ({
    value: values[field],
    error: errors[field],
    onChange: (e) => setValues((v) => ({ ...v, [field]: e.target.value })),
  });
  const decimal = { type: "text", inputMode: "decimal", autoComplete: "off" } as const;

  return (
    <Form
      noValidate
      // The form's own check, else the service's answer: a new one on each failed submit.
      failure={Object.keys(local).length > 0 ? local : apiError}
      className="space-y-5"
      onSubmit={(e) => {
        e.preventDefault();
        const read = readForm(values, units);
        setLocal(read.errors ?? {});
        setDismissed(error);
        if (read.input) onSubmit(read.input, values);
      }}
    >
      {fieldLevel && <Notice tone="error">Some fields need another look.</Notice>}
      {apiError && !fieldLevel && <Notice tone="error">{apiError.message}</Notice>}

      <div className="grid gap-4 sm:grid-cols-2">
        <div className="sm:col-span-2">
          {/* The form opens in place of the button that opened it ("Record activity", "Edit"): the
              keyboard goes on in its first field. */}
          <Field label="Name" placeholder="e.g. Morning run" maxLength={200} autoFocus {...bind("name")} />
        </div>
        <SelectField
          label="Sport type"
          value={values.sport_type}
          error={errors.sport_type}
          onChange={(e) => setValues((v) => withSport(v, e.target.value as SportType, units))}
        >
          {SPORTS.map((s) => (
            <option key={s} value={s}>
              {SPORT_LABELS[s]}
            </option>
          ))}
        </SelectField>
        <div className="grid grid-cols-2 gap-3">
          <Field label="Date" type="date" {...bind("date")} />
          <Field label="Start time" type="time" {...bind("time")} />
        </div>
        <Field label="Duration" placeholder="1:05:00" hint="Elapsed time: h:mm:ss, m:ss or minutes" autoComplete="off" {...bind("duration")} />
        {/* A swim's in metres or yards, as its page reads it. */}
        <Field label={`Distance (${distance.label})`} placeholder={distance.inputDigits ? "0.00" : "0"} {...decimal} {...bind("distance")} />
      </div>

      <fieldset className="space-y-4">
        <legend className="text-sm font-semibold text-slate-800">
          Optional details <span className="font-normal text-slate-500">— leave blank if unknown</span>
        </legend>
        <div className="grid gap-4 sm:grid-cols-2">
          <Field label="Moving time" placeholder="1:00:00" hint="Time spent moving, if less than the duration" autoComplete="off" {...bind("moving_time")} />
          <Field label={`Elevation gain (${u.elevation})`} {...decimal} {...bind("elevation")} />
          <Field label="Average heart rate (bpm)" {...decimal} {...bind("avg_hr")} />
          <Field label="Max heart rate (bpm)" {...decimal} {...bind("max_hr")} />
          <Field label={`Max speed (${u.speed})`} {...decimal} {...bind("max_speed")} />
          <Field label="Average power (W)" {...decimal} {...bind("power")} />
          <Field label="Energy (kcal)" {...decimal} {...bind("energy")} />
        </div>
      </fieldset>

      <div className="flex flex-wrap gap-2">
        <Button type="submit" disabled={pending}>
          Save
        </Button>
        <Button type="button" variant="secondary" onClick={onCancel} disabled={pending}>
          Cancel
        </Button>
      </div>
    </Form>
  );
}
