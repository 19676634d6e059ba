import type { Metadata } from "next";
import { requireUserId } from "@/app/(console)/require-user";
import { ActivitiesPanel } from "@/components/activities/activities-panel";
import { PageHeader } from "@/components/ui/card";

export const metadata: Metadata = { title: "Activities" };

export default async function ActivitiesPage() {
  await requireUserId("/activities");
  return (
    <>
      <PageHeader title="Activities" description="Everything you have recorded, newest first, in the units you prefer." />
      <ActivitiesPanel />
    </>
  );
}
