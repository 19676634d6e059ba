import type { Metadata } from "next";
import { requireUserId } from "@/app/(console)/require-user";
import { PageHeader } from "@/components/ui/card";
import { DeveloperAppsPanel } from "@/components/developer-apps/apps-panel";

export const metadata: Metadata = { title: "Developer apps" };

export default async function DeveloperAppsPage() {
  await requireUserId("/developers/apps");
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
