"use client";

import { ConsoleApiError } from "@/components/console/api";
import { ChoiceGroup, Field } from "@/components/ui/field";
import { FormError } from "@/components/ui/form-error";
import { Notice } from "@/components/ui/notice";
import { EVENT_OPTIONS } from "./shared";

// The fields the add and edit forms of an endpoint share.

/** A refused save: what the endpoint did when the handshake failed (`failed` says what did not happen), else the errors not shown beside a field. */
export function EndpointProblem({ error, failed }: { error: Error | null; failed: string }) {
  if (error instanceof ConsoleApiError && error.code === "webhook_verification_failed") {
    return (
      <Notice tone="error">
        <p className="font-medium">{failed}</p>
        <p className="mt-1 break-words">{error.message}</p>
      </Notice>
    );
  }
  return <FormError error={error} shown={["url", "events", "verify_token"]} />;
}

/** The field errors of a refused save, by field. */
export function endpointFieldErrors(error: Error | null): Record<string, string> {
  return error instanceof ConsoleApiError ? error.fields : {};
}

/** `hub.verify_token` for the handshake: kept sealed and sent again in later handshakes until another is given. */
export function VerifyTokenField({ value, onChange, error, hint }: { value: string; onChange: (v: string) => void; error?: string; hint: string }) {
  return <Field label="Verify token (optional)" value={value} maxLength={200} error={error} onChange={(e) => onChange(e.target.value)} hint={hint} />;
}

/** The event types an endpoint receives, one checkbox each with what it means and the scope it needs. */
export function EventChoices({ events, onChange, error }: { events: string[]; onChange: (events: string[]) => void; error?: string }) {
  return (
    <ChoiceGroup legend="Events" error={error}>
      {(boxProps) => (
        <div className="mt-2 grid gap-2 sm:grid-cols-2">
          {EVENT_OPTIONS.map(({ type: t, label, scope }) => (
            <label key={t} className="flex cursor-pointer items-start gap-2 rounded-md border border-slate-200 p-2 text-sm">
              <input
                type="checkbox"
                className="mt-0.5"
                {...boxProps}
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
      )}
    </ChoiceGroup>
  );
}
