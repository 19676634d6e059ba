import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { TeamsPanel } from "@/components/teams/teams-panel";
import { PageHeader } from "@/components/ui/card";
import { currentUserId, signInPath } from "@/lib/auth/next-auth";

export const metadata: Metadata = { title: "Teams" };

export default async function TeamsPage() {
  if (!(await currentUserId())) redirect(signInPath("/teams"));
  return (
    <>
      <PageHeader
        title="Teams"
        description="The teams you coach. Athletes you invite join once they accept; only then can you see their data."
      />
      <TeamsPanel />
    </>
  );
}
