import type { Metadata } from "next";
import { requireUserId } from "@/app/(console)/require-user";
import { PageHeader } from "@/components/ui/card";
import { TokensPanel } from "@/components/tokens/tokens-panel";
import { SCOPES } from "@/lib/auth/scopes";
import { getEnv } from "@/lib/env";

export const metadata: Metadata = { title: "Personal access tokens" };

export default async function TokensPage() {
  await requireUserId("/settings/tokens");
  const scopes = Object.entries(SCOPES).map(([name, s]) => ({ name, plain: s.plain }));
  return (
    <>
      <PageHeader
        title="Personal access tokens"
        description="Tokens for your own scripts. Each acts as you, with the scopes you choose, against the API."
      />
      <TokensPanel scopes={scopes} apiBaseUrl={getEnv().apiBaseUrl} />
    </>
  );
}
