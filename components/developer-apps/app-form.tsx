"use client";

import { useState } from "react";
import { Button } from "@/components/ui/button";
import { Field } from "@/components/ui/field";
import { Form } from "@/components/ui/form";
import { FormError } from "@/components/ui/form-error";
import { ConsoleApiError } from "@/components/console/api";
import { RedirectUrisField } from "./redirect-uris-field";
import { linesOf, redirectUriErrors } from "./shared";

export type AppFormValues = {
  name: string;
  kind: "confidential" | "public";
  redirect_uris: string[];
  logo_url: string;
  homepage_url: string;
};

/**
 * The fields of an app, for registering one (kind chosen) or editing one (kind fixed). The
 * server checks every rule; its field errors are shown beside the fields they name.
 */
export function AppForm({
  initial,
  kindFixed,
  submitLabel,
  pending,
  error,
  onSubmit,
  onCancel,
}: {
  initial?: Partial<AppFormValues>;
  kindFixed?: boolean;
  submitLabel: string;
  pending: boolean;
  error: Error | null;
  onSubmit: (v: AppFormValues) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState(initial?.name ?? "");
  const [kind, setKind] = useState<AppFormValues["kind"]>(initial?.kind ?? "confidential");
  const [uris, setUris] = useState((initial?.redirect_uris ?? []).join("\n"));
  const [logo, setLogo] = useState(initial?.logo_url ?? "");
  const [homepage, setHomepage] = useState(initial?.homepage_url ?? "");
  const fields = error instanceof ConsoleApiError ? error.fields : {};
  const uriErrors = redirectUriErrors(fields);

  return (
    <Form
      noValidate
      failure={error}
      className="space-y-4"
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit({ name, kind, redirect_uris: linesOf(uris), logo_url: logo.trim(), homepage_url: homepage.trim() });
      }}
    >
      <FormError error={error} shown={["name", "redirect_uris", "logo_url", "homepage_url"]} />
      {/* The form appears in place of the button that opened it ("Register app", "Edit"): the
          keyboard goes on in its first field. */}
      <Field
        label="App name"
        value={name}
        maxLength={100}
        error={fields.name}
        onChange={(e) => setName(e.target.value)}
        placeholder="e.g. Training Log"
        autoFocus
      />
      {!kindFixed && (
        <fieldset>
          <legend className="text-sm font-medium text-slate-700">Kind</legend>
          <div className="mt-2 grid gap-2 sm:grid-cols-2">
            <KindOption
              checked={kind === "confidential"}
              onChange={() => setKind("confidential")}
              title="Confidential"
              text="Runs on a server that can keep a secret. Gets a client secret; authenticates with HTTP Basic and PKCE."
            />
            <KindOption
              checked={kind === "public"}
              onChange={() => setKind("public")}
              title="Public"
              text="A native, mobile or browser app that cannot keep a secret. No secret: PKCE (S256) only."
            />
          </div>
        </fieldset>
      )}
      <RedirectUrisField value={uris} onChange={setUris} errors={uriErrors} kind={kind} />
      <div className="grid gap-4 sm:grid-cols-2">
        <Field
          label="Logo URL (optional)"
          type="url"
          maxLength={2000}
          inputMode="url"
          value={logo}
          error={fields.logo_url}
          hint="An https:// image, shown on the consent screen."
          onChange={(e) => setLogo(e.target.value)}
        />
        <Field
          label="Homepage URL (optional)"
          type="url"
          maxLength={2000}
          inputMode="url"
          value={homepage}
          error={fields.homepage_url}
          hint="Where athletes can learn about the app."
          onChange={(e) => setHomepage(e.target.value)}
        />
      </div>
      <div className="flex flex-wrap gap-2">
        <Button type="submit" disabled={pending}>
          {submitLabel}
        </Button>
        <Button type="button" variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </Form>
  );
}

function KindOption({ checked, onChange, title, text }: { checked: boolean; onChange: () => void; title: string; text: string }) {
  return (
    <label
      className={`flex cursor-pointer items-start gap-2 rounded-md border p-3 text-sm ${checked ? "border-brand-500 bg-brand-50" : "border-slate-200"}`}
    >
      <input type="radio" name="kind" className="mt-0.5" checked={checked} onChange={onChange} />
      <span>
        <span className="font-medium">{title}</span>
        <span className="mt-0.5 block text-slate-600">{text}</span>
      </span>
    </label>
  );
}
