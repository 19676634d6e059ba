import type { Metadata } from "next";
import { requireUserId } from "@/app/(console)/require-user";
import { InvitationsPanel } from "@/components/teams/invitations-panel";
import { PageHeader } from "@/components/ui/card";

export const metadata: Metadata = { title: "Team invitations" };

export default async function TeamInvitationsPage() {
  await requireUserId("/settings/teams");
  return (
    <>
      <PageHeader title="Team invitations" description="Coaches who invite you see your data only after you accept, and no longer once you leave their team." />
      <InvitationsPanel />
    </>
  );
}
