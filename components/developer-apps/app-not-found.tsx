"use client";

import Link from "next/link";
import { PageHeader } from "@/components/ui/card";

/** The heading of an app's page, or of one of its sub-pages, when the developer has no such app. */
export function AppNotFoundHeader({ clientId }: { clientId: string }) {
  return <PageHeader title="App not found" description={<span className="[overflow-wrap:anywhere]">You have no app with client_id {clientId}.</span>} />;
}

/** An app's sub-page (webhooks, usage) for an app the developer does not have: the way back, and that it is not there. */
export function AppNotFound({ clientId }: { clientId: string }) {
  return (
    <>
      <Link href="/developers/apps" className="mb-3 inline-block text-sm text-brand-600 hover:underline">
        ← All apps
      </Link>
      <AppNotFoundHeader clientId={clientId} />
    </>
  );
}
