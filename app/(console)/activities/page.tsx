import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { ActivitiesPanel } from "@/components/activities/activities-panel";
import { PageHeader } from "@/components/ui/card";
import { currentUserId, signInPath } from "@/lib/auth/next-auth";

export const metadata: Metadata = { title: "Activities" };

export default async function ActivitiesPage() {
  if (!(await currentUserId())) redirect(signInPath("/activities"));
  return (
    <>
      <PageHeader title="Activities" description="Everything you have recorded, newest first, in the units you prefer." />
      <ActivitiesPanel />
    </>
  );
}
