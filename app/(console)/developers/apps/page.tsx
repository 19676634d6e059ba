import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { PageHeader } from "@/components/ui/card";
import { DeveloperAppsPanel } from "@/components/developer-apps/apps-panel";
import { currentUserId, signInPath } from "@/lib/auth/next-auth";

export const metadata: Metadata = { title: "Developer apps" };

export default async function DeveloperAppsPage() {
  if (!(await currentUserId())) redirect(signInPath("/developers/apps"));
  return (
    <>
      <PageHeader
        title="Developer apps"
        description="Apps you register here can ask athletes for access with OAuth 2.0 and call the API on their behalf."
      />
      <DeveloperAppsPanel />
    </>
  );
}
