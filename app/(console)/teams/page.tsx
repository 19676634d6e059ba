import type { Metadata } from "next";
import { TeamsPanel } from "@/components/teams/teams-panel";
import { PageHeader } from "@/components/ui/card";
import { requireUserId } from "@/lib/auth/require-user";

export const metadata: Metadata = { title: "Teams" };

export default async function TeamsPage() {
  await requireUserId("/teams");
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
