import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { DeveloperAppDetail } from "@/components/developer-apps/app-detail";
import { currentUserId, signInPath } from "@/lib/auth/next-auth";
import { getEnv } from "@/lib/env";

export const metadata: Metadata = { title: "App" };

export default async function DeveloperAppPage({ params }: { params: Promise<{ client_id: string }> }) {
  const { client_id } = await params;
  if (!(await currentUserId())) redirect(signInPath(`/developers/apps/${encodeURIComponent(client_id)}`));
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
