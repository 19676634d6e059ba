import { useId, type ChangeEvent, type CompositionEvent, type InputHTMLAttributes, type ReactNode, type Ref, type SelectHTMLAttributes } from "react";
import { firstCharacters } from "@/lib/text";
import { asSentence } from "./format";

const control =
  "block w-full rounded-md border border-slate-300 bg-white px-3 py-2 text-sm shadow-sm focus:border-brand-500 focus:outline-none focus:ring-2 focus:ring-brand-500/30 aria-[invalid=true]:border-red-400";

/**
 * What a control says besides its name: its error (first, the thing to act on) and its hint,
 * both kept on the page and both named by `aria-describedby`, so a screen reader reads them
 * when the control takes the focus (a failed submit moves it there: components/ui/form.tsx).
 */
function described(id: string, error: ReactNode, hint: ReactNode) {
  const ids = [error ? `${id}-error` : null, hint ? `${id}-hint` : null].filter(Boolean).join(" ");
  return { "aria-invalid": error ? true : undefined, "aria-describedby": ids || undefined } as const;
}

function Below({ id, error, hint }: { id: string; error?: ReactNode; hint?: ReactNode }) {
  return (
    <>
      {hint && (
        <p id={`${id}-hint`} className="text-xs text-slate-500">
          {hint}
        </p>
      )}
      {error && (
        <p id={`${id}-error`} className="text-sm text-red-700 [overflow-wrap:anywhere]">
          {typeof error === "string" ? asSentence(error) : error}
        </p>
      )}
    </>
  );
}

/**
 * A labelled input with its hint and error below it; the label is the accessible name.
 * `maxLength` counts characters as the service does (code points, lib/text.ts `firstCharacters`), not as
 * the browser's own attribute would (UTF-16 units: 100 emoji filled a 200-character name). Text
 * composed with an input method is cut once the composition ends (its last input event comes
 * while still composing).
 */
export function Field({
  label,
  error,
  hint,
  maxLength,
  onChange,
  onCompositionEnd,
  ...props
}: InputHTMLAttributes<HTMLInputElement> & { label: string; error?: string; hint?: ReactNode; ref?: Ref<HTMLInputElement> }) {
  const id = useId();
  /** Cuts the input's text to `maxLength` characters; true when it did. */
  const cut = (input: HTMLInputElement) => {
    if (maxLength === undefined) return false;
    const within = firstCharacters(input.value, maxLength);
    if (within === input.value) return false;
    input.value = within;
    return true;
  };
  const limited = (e: ChangeEvent<HTMLInputElement>) => {
    if (!(e.nativeEvent as InputEvent).isComposing) cut(e.target);
    onChange?.(e);
  };
  const composed = (e: CompositionEvent<HTMLInputElement>) => {
    onCompositionEnd?.(e);
    // What the handler reads of a change is its target's value: the input, now cut.
    if (cut(e.currentTarget)) onChange?.({ ...e, target: e.currentTarget } as unknown as ChangeEvent<HTMLInputElement>);
  };
  return (
    <div className="space-y-1">
      <label htmlFor={id} className="block text-sm font-medium text-slate-700">
        {label}
      </label>
      <input
        id={id}
        {...described(id, error, hint)}
        className={control}
        onChange={maxLength !== undefined || onChange ? limited : undefined}
        onCompositionEnd={maxLength !== undefined || onCompositionEnd ? composed : undefined}
        {...props}
      />
      <Below id={id} error={error} hint={hint} />
    </div>
  );
}

export function SelectField({
  label,
  error,
  hint,
  children,
  ...props
}: SelectHTMLAttributes<HTMLSelectElement> & { label: string; error?: string; hint?: ReactNode }) {
  const id = useId();
  return (
    <div className="space-y-1">
      <label htmlFor={id} className="block text-sm font-medium text-slate-700">
        {label}
      </label>
      <select id={id} {...described(id, error, hint)} className={control} {...props}>
        {children}
      </select>
      <Below id={id} error={error} hint={hint} />
    </div>
  );
}

/**
 * A group of checkboxes under a legend, with the group's error below them. The error describes
 * the group and each box (which says it is invalid), so the box a failed submit focuses reads it.
 * `children` gets the props to spread on each box.
 */
export function ChoiceGroup({
  legend,
  error,
  children,
}: {
  legend: string;
  error?: string;
  children: (boxProps: { "aria-invalid"?: true; "aria-describedby"?: string }) => ReactNode;
}) {
  const id = useId();
  const boxProps = described(id, error, null);
  return (
    <fieldset aria-describedby={boxProps["aria-describedby"]}>
      <legend className="text-sm font-medium text-slate-700">{legend}</legend>
      {children(boxProps)}
      {error && (
        <p id={`${id}-error`} className="mt-1 text-sm text-red-700">
          {asSentence(error)}
        </p>
      )}
    </fieldset>
  );
}
