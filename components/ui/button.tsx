"use client";

import type { ButtonHTMLAttributes, Ref } from "react";

const VARIANTS = {
  primary: "bg-brand-600 text-white hover:bg-brand-700 aria-disabled:bg-slate-300",
  secondary: "border border-slate-300 bg-white text-slate-800 hover:bg-slate-100 aria-disabled:bg-white aria-disabled:text-slate-400",
  danger: "border border-red-300 bg-white text-red-700 hover:bg-red-50 aria-disabled:bg-white aria-disabled:text-slate-400",
  ghost: "text-slate-700 hover:bg-slate-100",
} as const;

/**
 * The console's button. `disabled` is said with `aria-disabled` and a click (or Enter in the
 * form's fields, which clicks the submit button) is ignored, instead of the `disabled`
 * attribute: a button that is pressed and then disabled while its request runs (Create, Save,
 * Sign in) would drop the keyboard's focus to the page's top, and a failed submit would leave
 * the person there. This way the focus stays where they were, and a screen reader still hears
 * the button is unavailable.
 */
export function Button({
  variant = "primary",
  className = "",
  disabled,
  onClick,
  ...props
}: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: keyof typeof VARIANTS; ref?: Ref<HTMLButtonElement> }) {
  return (
    <button
      className={`inline-flex items-center justify-center gap-2 rounded-md px-3.5 py-2 text-sm font-medium shadow-sm transition focus:outline-none focus-visible:ring-2 focus-visible:ring-brand-500 focus-visible:ring-offset-2 aria-disabled:cursor-not-allowed ${VARIANTS[variant]} ${className}`}
      aria-disabled={disabled || undefined}
      onClick={(e) => {
        // preventDefault on a submit button's click also stops the form's submission.
        if (disabled) e.preventDefault();
        else onClick?.(e);
      }}
      {...props}
    />
  );
}
