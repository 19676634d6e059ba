import { defineOperation } from "../http/operation";
import { AppUsage, USAGE_DAYS } from "./schemas";

export const getAppUsageOp = defineOperation({
  method: "GET",
  path: "/v1/app/usage",
  operationId: "getAppUsage",
  summary: "Get the app's usage",
  description: `Requests per UTC day over the last ${USAGE_DAYS} days (every day present, zeros included) and the current rate-limit windows, counted across every token issued to the app. Reading it counts as a request, like any other.`,
  tag: "App",
  auth: "app",
  response: { status: 200, description: "The app's usage.", schema: AppUsage },
  errors: [],
});
