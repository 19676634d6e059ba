import { ConsoleApiError } from "@/components/console/api";
import { asSentence } from "./format";
import { Notice } from "./notice";

/**
 * The one message a failed form shows above its fields. A problem the service tied to a field
 * the form shows is said there, at the field, and not again here; what is left (a field the
 * form does not show, or a problem with no field) is said here once, in words.
 */
export function FormError({ error, shown }: { error: Error | null; shown: readonly string[] }) {
  const lines = formErrorLines(error, shown);
  if (!lines.length) return null;
  return (
    <Notice tone="error">
      {lines.map((line) => (
        <p key={line}>{line}</p>
      ))}
    </Notice>
  );
}

/** What FormError says: nothing for problems shown at their fields. */
export function formErrorLines(error: Error | null, shown: readonly string[]): string[] {
  if (!error) return [];
  if (!(error instanceof ConsoleApiError) || Object.keys(error.fields).length === 0) return [error.message];
  return Object.entries(error.fields)
    .filter(([field]) => !shown.some((s) => field === s || field.startsWith(`${s}.`)))
    .map(([, detail]) => asSentence(detail));
}
