import type { Metadata } from "next";
import { ActivityDetail } from "@/components/activities/activity-detail";
import { requireUserId } from "@/lib/auth/require-user";

export const metadata: Metadata = { title: "Activity" };

export default async function ActivityPage({ params }: { params: Promise<{ activity_id: string }> }) {
  const { activity_id } = await params;
  await requireUserId(`/activities/${encodeURIComponent(activity_id)}`);
  return <ActivityDetail activityId={activity_id} />;
}
