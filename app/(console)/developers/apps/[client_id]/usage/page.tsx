import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { AppUsagePanel } from "@/components/developer-apps/usage-panel";
import { currentUserId, signInPath } from "@/lib/auth/next-auth";
import { getEnv } from "@/lib/env";

export const metadata: Metadata = { title: "App usage" };

export default async function AppUsagePage({ params }: { params: Promise<{ client_id: string }> }) {
  const { client_id } = await params;
  if (!(await currentUserId())) redirect(signInPath(`/developers/apps/${encodeURIComponent(client_id)}/usage`));
  return <AppUsagePanel clientId={client_id} usageUrl={`${getEnv().apiBaseUrl}/app/usage`} />;
}
