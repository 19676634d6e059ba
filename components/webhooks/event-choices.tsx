"use client";

import { EVENT_OPTIONS } from "./shared";

/** The event types an endpoint receives, one checkbox each with what it means and the scope it needs. */
export function EventChoices({ events, onChange, error }: { events: string[]; onChange: (events: string[]) => void; error?: string }) {
  return (
    <fieldset>
      <legend className="text-sm font-medium text-slate-700">Events</legend>
      <div className="mt-2 grid gap-2 sm:grid-cols-2">
        {EVENT_OPTIONS.map(({ type: t, label, scope }) => (
          <label key={t} className="flex cursor-pointer items-start gap-2 rounded-md border border-slate-200 p-2 text-sm">
            <input
              type="checkbox"
              className="mt-0.5"
              checked={events.includes(t)}
              onChange={(e) => onChange(e.target.checked ? [...events, t] : events.filter((x) => x !== t))}
            />
            <span>
              <span className="font-mono text-xs">{t}</span>
              <span className="block text-xs text-slate-600">
                {label}
                {scope && ` Needs ${scope}.`}
              </span>
            </span>
          </label>
        ))}
      </div>
      {error && <p className="mt-1 text-sm text-red-700">{error}</p>}
    </fieldset>
  );
}
