"use client";

import { useEffect, useRef, type FormHTMLAttributes } from "react";

/**
 * Every console form. When a submit fails (`failure` becomes a new value: the mutation's error,
 * the action's answer, the form's own check), the focus moves to the first field marked
 * aria-invalid, so the keyboard lands where the fix is and a screen reader reads that field's
 * error through its aria-describedby; otherwise it would stay on the submit button (or fall to
 * the page's top when the button is disabled while sending) and nothing would be said. A
 * failure no field shows is said by the form's role=alert notice instead, and the focus stays.
 */
export function Form({ failure, ...props }: FormHTMLAttributes<HTMLFormElement> & { failure: unknown }) {
  const ref = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (failure && ref.current) firstInvalidControl(ref.current)?.focus();
  }, [failure]);
  return <form ref={ref} {...props} />;
}

const CONTROL = "input:not([type=hidden]), select, textarea";

/** The first control marked invalid, or the first control inside a group marked invalid. */
export function firstInvalidControl(form: HTMLElement): HTMLElement | null {
  const marked = form.querySelector<HTMLElement>(`:is(${CONTROL}, fieldset)[aria-invalid="true"]`);
  if (!marked) return null;
  return marked.matches(CONTROL) ? marked : marked.querySelector<HTMLElement>(CONTROL);
}
