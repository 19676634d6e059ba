import type { Metadata } from "next";
import { requireUserId } from "@/app/(console)/require-user";
import { ActivityDetail } from "@/components/activities/activity-detail";

export const metadata: Metadata = { title: "Activity" };

export default async function ActivityPage({ params }: { params: Promise<{ activity_id: string }> }) {
  const { activity_id } = await params;
  await requireUserId(`/activities/${encodeURIComponent(activity_id)}`);
  return <ActivityDetail activityId={activity_id} />;
}
