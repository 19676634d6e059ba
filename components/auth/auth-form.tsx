"use client";

import Link from "next/link";
import { useActionState, useEffect, useRef, useSyncExternalStore } from "react";
import { Button } from "@/components/ui/button";
import { Field } from "@/components/ui/field";
import { Form } from "@/components/ui/form";
import { Notice } from "@/components/ui/notice";

/** What a sign-in or sign-up action answers the form with: what to show, and what to fill back in. */
export type FormState = {
  error?: string;
  fieldErrors?: Record<string, string>;
  values?: Record<string, string>;
};

type Props = {
  mode: "signin" | "signup";
  action: (prev: FormState, form: FormData) => Promise<FormState>;
  callbackUrl?: string;
  demo?: boolean;
  /** A message the page arrived with (Auth.js's `?error=`), until the form is sent. */
  error?: string;
};

const noChanges = () => () => {};
/** The browser's IANA zone (none on the server's render), so a new account's times start out in it. */
const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone ?? "";

export function AuthForm({ mode, action, callbackUrl, demo, error }: Props) {
  const [state, formAction, pending] = useActionState(action, { error });
  const signup = mode === "signup";
  // React resets the form after its action; a sign-up refused for its email or name keeps the
  // new password it was sent with (the server never sends a password back). Put back into the
  // field's value, never its markup (a defaultValue is the input's value attribute). Sign-in's
  // is cleared, as a wrong one should be.
  const newPassword = useRef("");
  const passwordField = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (signup && passwordField.current && newPassword.current && !state.fieldErrors?.password) passwordField.current.value = newPassword.current;
    newPassword.current = "";
  }, [signup, state]);
  const zone = useSyncExternalStore(noChanges, browserZone, () => "");
  const suffix = callbackUrl ? `?callbackUrl=${encodeURIComponent(callbackUrl)}` : "";
  return (
    <Form
      action={formAction}
      onSubmit={signup ? (e) => void (newPassword.current = String(new FormData(e.currentTarget).get("password") ?? "")) : undefined}
      failure={state}
      className="space-y-4"
      noValidate
    >
      {state.error && <Notice tone="error">{state.error}</Notice>}
      {callbackUrl && <input type="hidden" name="callbackUrl" value={callbackUrl} />}
      {signup && zone && <input type="hidden" name="timezone" value={zone} />}
      {signup && (
        <Field
          label="Name"
          name="name"
          autoComplete="name"
          maxLength={100}
          defaultValue={state.values?.name}
          error={state.fieldErrors?.name}
          hint="Optional: shown to your coaches. Left empty, the part of your email before the @."
        />
      )}
      <Field
        label="Email"
        name="email"
        type="email"
        autoComplete="email"
        maxLength={254}
        defaultValue={state.values?.email}
        error={state.fieldErrors?.email}
        required
      />
      <Field
        label="Password"
        name="password"
        type="password"
        maxLength={200}
        autoComplete={signup ? "new-password" : "current-password"}
        ref={passwordField}
        error={state.fieldErrors?.password}
        hint={signup ? "At least 8 characters." : undefined}
        required
      />
      <Button type="submit" className="w-full" disabled={pending}>
        {signup ? "Sign up" : "Sign in"}
      </Button>
      <p className="text-center text-sm text-slate-600">
        {signup ? (
          <>
            Have an account? <Link className="font-medium text-brand-700 underline hover:text-brand-600" href={`/signin${suffix}`}>Sign in</Link>
          </>
        ) : (
          <>
            New here? <Link className="font-medium text-brand-700 underline hover:text-brand-600" href={`/signup${suffix}`}>Create an account</Link>
          </>
        )}
      </p>
      {demo && !signup && (
        <p className="rounded-md bg-slate-100 px-3 py-2 text-xs text-slate-600">
          Demo world: sign in as <code>ava@example.com</code> (athlete), <code>cora@example.com</code> (coach) or{" "}
          <code>dev@example.com</code> (developer of the demo apps), each with password <code>demo-password</code>.
        </p>
      )}
    </Form>
  );
}
