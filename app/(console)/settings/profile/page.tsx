import type { Metadata } from "next";
import { requireUserId } from "@/app/(console)/require-user";
import { ProfilePanel } from "@/components/profile/profile-panel";
import { PageHeader } from "@/components/ui/card";
import { timezones } from "@/lib/time/local";

export const metadata: Metadata = { title: "Profile" };

export default async function ProfilePage() {
  await requireUserId("/settings/profile");
  return (
    <>
      <PageHeader title="Profile" description="Your name, your timezone, and the units the console shows your activities in." />
      <ProfilePanel timezones={timezones()} />
    </>
  );
}
