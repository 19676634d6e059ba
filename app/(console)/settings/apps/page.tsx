import type { Metadata } from "next";
import { requireUserId } from "@/app/(console)/require-user";
import { PageHeader } from "@/components/ui/card";
import { ConnectedAppsPanel } from "@/components/connected-apps/connected-apps-panel";

export const metadata: Metadata = { title: "Connected apps" };

export default async function ConnectedAppsPage() {
  await requireUserId("/settings/apps");
  return (
    <>
      <PageHeader
        title="Connected apps"
        description="Apps you have allowed to use your account. Disconnecting one stops its access at once."
      />
      <ConnectedAppsPanel />
    </>
  );
}
