import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { InvitationsPanel } from "@/components/teams/invitations-panel";
import { PageHeader } from "@/components/ui/card";
import { currentUserId, signInPath } from "@/lib/auth/next-auth";

export const metadata: Metadata = { title: "Team invitations" };

export default async function TeamInvitationsPage() {
  if (!(await currentUserId())) redirect(signInPath("/settings/teams"));
  return (
    <>
      <PageHeader title="Team invitations" description="Coaches who invite you see your data only after you accept." />
      <InvitationsPanel />
    </>
  );
}
