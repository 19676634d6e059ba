import type { Metadata } from "next";
import { ActivitiesPanel } from "@/components/activities/activities-panel";
import { PageHeader } from "@/components/ui/card";
import { requireUserId } from "@/lib/auth/require-user";

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
