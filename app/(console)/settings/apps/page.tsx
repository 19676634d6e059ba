import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { PageHeader } from "@/components/ui/card";
import { ConnectedAppsPanel } from "@/components/connected-apps/connected-apps-panel";
import { currentUserId, signInPath } from "@/lib/auth/next-auth";

export const metadata: Metadata = { title: "Connected apps" };

export default async function ConnectedAppsPage() {
  if (!(await currentUserId())) redirect(signInPath("/settings/apps"));
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
