import type { Metadata } from "next";
import { requireUserId } from "@/app/(console)/require-user";
import { DeveloperAppDetail } from "@/components/developer-apps/app-detail";
import { getEnv } from "@/lib/env";

export const metadata: Metadata = { title: "App" };

export default async function DeveloperAppPage({ params }: { params: Promise<{ client_id: string }> }) {
  const { client_id } = await params;
  await requireUserId(`/developers/apps/${encodeURIComponent(client_id)}`);
  const { baseUrl, apiBaseUrl } = getEnv();
  return (
    <DeveloperAppDetail
      clientId={client_id}
      endpoints={{
        authorize: `${baseUrl}/oauth/authorize`,
        token: `${baseUrl}/oauth/token`,
        discovery: `${baseUrl}/.well-known/oauth-authorization-server`,
        api: apiBaseUrl,
      }}
    />
  );
}
