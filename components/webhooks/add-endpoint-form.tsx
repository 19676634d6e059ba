"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { consoleFetch } from "@/components/console/api";
import { useSubmissionKey } from "@/components/console/submission-key";
import { Button } from "@/components/ui/button";
import { Field } from "@/components/ui/field";
import { Form } from "@/components/ui/form";
import { useOneAtATime } from "@/components/ui/one-at-a-time";
import type { SubscriptionWithSecret } from "@/lib/webhooks/subscriptions/schemas";
import { EndpointProblem, EventChoices, VerifyTokenField, endpointFieldErrors } from "./endpoint-fields";
import { EVENT_OPTIONS, webhooksPath } from "./shared";

/**
 * URL and event types of a new endpoint. Submitting runs the verification handshake on the
 * server; if the endpoint does not complete it, what it did is shown and nothing is created.
 */
export function AddEndpointForm({
  clientId,
  allowPrivate,
  onCreated,
  onCancel,
}: {
  clientId: string;
  allowPrivate: boolean;
  onCreated: (sub: SubscriptionWithSecret) => void;
  onCancel: () => void;
}) {
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<string[]>(() => EVENT_OPTIONS.filter((o) => o.checked).map((o) => o.type));
  const [verifyToken, setVerifyToken] = useState("");
  // One key per endpoint being added: a retry after a lost answer gets the same subscription
  // (and its secret) back, not a second one delivering every event again.
  const submission = useSubmissionKey();
  const create = useMutation({
    mutationFn: () => {
      const body = { url: url.trim(), events, ...(verifyToken.trim() ? { verify_token: verifyToken.trim() } : {}) };
      return consoleFetch<SubscriptionWithSecret>(webhooksPath(clientId), { method: "POST", body, idempotencyKey: submission.keyFor(body) });
    },
    onSuccess: (sub) => {
      submission.renew();
      onCreated(sub);
    },
  });
  const fields = endpointFieldErrors(create.error);
  // One handshake at a time from the first press on: a second submit in the same instant would
  // send the request again while the first is still verifying.
  const oneAtATime = useOneAtATime();

  return (
    <Form
      noValidate
      failure={create.error}
      className="space-y-4"
      onSubmit={(e) => {
        e.preventDefault();
        oneAtATime(() => create.mutateAsync());
      }}
    >
      <EndpointProblem error={create.error} failed="The endpoint did not complete the handshake; nothing was created." />
      {/* Opened in place of "Add endpoint": the keyboard goes on in its first field. */}
      <Field
        label="Endpoint URL"
        autoFocus
        type="url"
        inputMode="url"
        placeholder="https://hooks.example.com/aas"
        value={url}
        error={fields.url}
        onChange={(e) => setUrl(e.target.value)}
        hint={
          <>
            {allowPrivate ? "http:// or https://" : "An https:// address on the public internet"}. Adding it sends{" "}
            <code>GET …?hub.mode=subscribe&amp;hub.challenge=…&amp;hub.verify_token=…</code>; answer within 5 seconds with status 200 and{" "}
            <code>{'{"hub.challenge": "<the challenge>"}'}</code>.
          </>
        }
      />
      <EventChoices events={events} onChange={setEvents} error={fields.events} />
      <VerifyTokenField
        value={verifyToken}
        onChange={setVerifyToken}
        error={fields.verify_token}
        hint="Sent as hub.verify_token so your endpoint can tell the handshake is for it. Generated if left empty."
      />
      <div className="flex flex-wrap items-center gap-2">
        <Button type="submit" disabled={create.isPending}>
          {create.isPending ? "Verifying…" : "Add endpoint"}
        </Button>
        <Button type="button" variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </Form>
  );
}
