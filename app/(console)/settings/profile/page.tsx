import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { ProfilePanel } from "@/components/profile/profile-panel";
import { PageHeader } from "@/components/ui/card";
import { currentUserId, signInPath } from "@/lib/auth/next-auth";
import { timezones } from "@/lib/time/local";

export const metadata: Metadata = { title: "Profile" };

export default async function ProfilePage() {
  if (!(await currentUserId())) redirect(signInPath("/settings/profile"));
  return (
    <>
      <PageHeader title="Profile" description="Your name, your timezone, and the units the console shows your activities in." />
      <ProfilePanel timezones={timezones()} />
    </>
  );
}
