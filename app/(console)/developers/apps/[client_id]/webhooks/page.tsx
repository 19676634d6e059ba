import type { Metadata } from "next";
import { requireUserId } from "@/app/(console)/require-user";
import { WebhooksPanel } from "@/components/webhooks/webhooks-panel";
import { getEnv } from "@/lib/env";

export const metadata: Metadata = { title: "Webhooks" };

export default async function AppWebhooksPage({ params }: { params: Promise<{ client_id: string }> }) {
  const { client_id } = await params;
  await requireUserId(`/developers/apps/${encodeURIComponent(client_id)}/webhooks`);
  const env = getEnv();
  return <WebhooksPanel clientId={client_id} allowPrivate={env.webhooksAllowPrivateNetworks} apiBaseUrl={env.apiBaseUrl} />;
}
