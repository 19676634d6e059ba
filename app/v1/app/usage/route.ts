// GET /v1/app/usage: the app's requests per day over 30 days and its current rate-limit windows.
import { handle, route } from "@/lib/http/api-route";
import { getAppUsageOp } from "@/lib/usage/operations";
import { getAppUsage } from "@/lib/usage/get-app-usage";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(getAppUsageOp, ({ ctx }) => getAppUsage({ ctx })),
});
