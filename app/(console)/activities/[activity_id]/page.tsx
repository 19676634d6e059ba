import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { ActivityDetail } from "@/components/activities/activity-detail";
import { currentUserId, signInPath } from "@/lib/auth/next-auth";

export const metadata: Metadata = { title: "Activity" };

export default async function ActivityPage({ params }: { params: Promise<{ activity_id: string }> }) {
  const { activity_id } = await params;
  if (!(await currentUserId())) redirect(signInPath(`/activities/${encodeURIComponent(activity_id)}`));
  return <ActivityDetail activityId={activity_id} />;
}
