import type { Metadata } from "next";
import { InvitationsPanel } from "@/components/teams/invitations-panel";
import { PageHeader } from "@/components/ui/card";
import { requireUserId } from "@/lib/auth/require-user";

export const metadata: Metadata = { title: "Team invitations" };

export default async function TeamInvitationsPage() {
  await requireUserId("/settings/teams");
  return (
    <>
      <PageHeader title="Team invitations" description="Coaches who invite you see your data only after you accept." />
      <InvitationsPanel />
    </>
  );
}
