import type { Metadata } from "next";
import { requireUserId } from "@/app/(console)/require-user";
import { MemberActivities } from "@/components/teams/member-activities";

export const metadata: Metadata = { title: "Athlete" };

export default async function MemberActivitiesPage({ params }: { params: Promise<{ athlete_id: string }> }) {
  const { athlete_id } = await params;
  await requireUserId(`/teams/athletes/${encodeURIComponent(athlete_id)}`);
  return <MemberActivities athleteId={athlete_id} />;
}
