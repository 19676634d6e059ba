import type { Metadata } from "next";
import { requireUserId } from "@/app/(console)/require-user";
import { TeamsPanel } from "@/components/teams/teams-panel";
import { PageHeader } from "@/components/ui/card";

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
