// /api/inngest: Inngest calls the webhook functions here, served only when DELIVERY_RUNNER=inngest.
import { serve } from "inngest/next";
import { getEnv } from "@/lib/env";
import { inngest } from "@/inngest/client";
import { functions } from "@/inngest";

const handler = serve({ client: inngest, functions });
type Handler = (req: Request, ctx: unknown) => Promise<Response>;
const served = (h: unknown): Handler => (req, ctx) =>
  getEnv().deliveryRunner === "inngest" ? (h as Handler)(req, ctx) : Promise.resolve(new Response(null, { status: 404 }));

export const GET = served(handler.GET);
export const POST = served(handler.POST);
export const PUT = served(handler.PUT);
