import type { Metadata } from "next";
import { requireUserId } from "@/app/(console)/require-user";
import { AppUsagePanel } from "@/components/developer-apps/usage-panel";
import { getEnv } from "@/lib/env";

export const metadata: Metadata = { title: "App usage" };

export default async function AppUsagePage({ params }: { params: Promise<{ client_id: string }> }) {
  const { client_id } = await params;
  await requireUserId(`/developers/apps/${encodeURIComponent(client_id)}/usage`);
  return <AppUsagePanel clientId={client_id} usageUrl={`${getEnv().apiBaseUrl}/app/usage`} />;
}
