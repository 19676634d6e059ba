"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { ConsoleApiError, consoleFetch } from "@/components/console/api";
import { Button } from "@/components/ui/button";
import { Field } from "@/components/ui/field";
import { Form } from "@/components/ui/form";
import type { Subscription, UpdatedSubscription } from "@/lib/webhooks/subscriptions/schemas";
import { EndpointProblem, EventChoices, VerifyTokenField, endpointFieldErrors } from "./endpoint-fields";

/**
 * An endpoint's URL, event types and verify token, changed in place. Only what changed is sent: a
 * new URL is verified with a fresh handshake before it replaces the old one, and if the endpoint
 * does not complete it, what it did is shown and nothing changes. A verify token typed here is
 * always sent (the one kept is sealed, so it cannot be compared): with a new URL it goes in that
 * handshake, else it is kept for the next one (re-enabling a disabled endpoint).
 */
export function EditEndpointForm({
  path,
  sub,
  onSaved,
  onCancel,
  onGone,
}: {
  path: string;
  sub: Subscription;
  /** With the subscription as saved (and whether only a verify token was sent), or null when nothing changed. */
  onSaved: (updated: UpdatedSubscription | null, tokenOnly?: boolean) => void;
  onCancel: () => void;
  /** The save was answered 404: the endpoint was deleted elsewhere. */
  onGone: () => void;
}) {
  const [url, setUrl] = useState(sub.url);
  const [events, setEvents] = useState<string[]>(sub.events);
  const [verifyToken, setVerifyToken] = useState("");
  const save = useMutation({
    mutationFn: (changes: { url?: string; events?: string[]; verify_token?: string }) => consoleFetch<UpdatedSubscription>(path, { method: "PATCH", body: changes }),
    onSuccess: (updated, changes) => onSaved(updated, Object.keys(changes).join() === "verify_token"),
    onError: (err) => {
      if (err instanceof ConsoleApiError && err.status === 404) onGone();
    },
  });
  const fields = endpointFieldErrors(save.error);

  return (
    <Form
      noValidate
      failure={save.error}
      className="space-y-4"
      onSubmit={(e) => {
        e.preventDefault();
        const changes: { url?: string; events?: string[]; verify_token?: string } = {};
        if (url.trim() !== sub.url) changes.url = url.trim();
        if ([...events].sort().join() !== [...sub.events].sort().join()) changes.events = events;
        // Kept for every later handshake: a receiver that changed its token is sent the new one
        // when the endpoint is re-enabled, not only when its URL changes.
        if (verifyToken.trim()) changes.verify_token = verifyToken.trim();
        if (Object.keys(changes).length) save.mutate(changes);
        else onSaved(null);
      }}
    >
      <EndpointProblem error={save.error} failed="The new URL did not complete the handshake; nothing was changed." />
      {/* Opened in place of "Edit": the keyboard goes on in its first field. */}
      <Field
        label="Endpoint URL"
        autoFocus
        type="url"
        inputMode="url"
        value={url}
        error={fields.url}
        onChange={(e) => setUrl(e.target.value)}
        hint="A new URL gets the handshake first, as a new endpoint does; deliveries go to it once it answers."
      />
      <VerifyTokenField
        value={verifyToken}
        onChange={setVerifyToken}
        error={fields.verify_token}
        hint="Sent as hub.verify_token in the endpoint's next handshake (a new URL, or re-enabling it) and every one after, if your endpoint checks it. Left empty, the one given before is kept (or one is generated)."
      />
      <EventChoices events={events} onChange={setEvents} error={fields.events} />
      <div className="flex flex-wrap items-center gap-2">
        <Button type="submit" disabled={save.isPending}>
          {save.isPending ? "Saving…" : "Save"}
        </Button>
        <Button type="button" variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </Form>
  );
}
