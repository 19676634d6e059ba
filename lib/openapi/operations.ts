import type { Operation } from "../http/operation";
import { getAthleteOp } from "../athletes/operations";
import {
  createActivityOp,
  deleteActivityOp,
  exportActivityOp,
  getActivityOp,
  getActivityStreamsOp,
  listActivitiesOp,
  listActivityLapsOp,
  updateActivityOp,
} from "../activities/operations";
import { createMetricOp, deleteMetricOp, getMetricOp, listMetricsOp } from "../metrics/operations";
import { listTeamMembersOp, listTeamsOp } from "../teams/operations";
import { getAppUsageOp } from "../usage/operations";
import { listAppEventsOp } from "../app-events/operations";
import { createUploadOp, getUploadOp } from "../uploads/operations";
import {
  createSubscriptionOp,
  deleteSubscriptionOp,
  getDeliveryOp,
  getSubscriptionOp,
  listDeliveriesOp,
  listSubscriptionsOp,
  redeliverDeliveryOp,
  rotateSubscriptionSecretOp,
  sendTestEventOp,
  updateSubscriptionOp,
} from "../webhooks/subscriptions/operations";

/** Every `/v1` operation. A test checks this against the route files, so none can be missed. */
export const OPERATIONS: Operation[] = [
  getAthleteOp,
  listActivitiesOp,
  createActivityOp,
  getActivityOp,
  updateActivityOp,
  deleteActivityOp,
  getActivityStreamsOp,
  listActivityLapsOp,
  exportActivityOp,
  listMetricsOp,
  createMetricOp,
  getMetricOp,
  deleteMetricOp,
  listTeamsOp,
  listTeamMembersOp,
  getAppUsageOp,
  createSubscriptionOp,
  listSubscriptionsOp,
  getSubscriptionOp,
  updateSubscriptionOp,
  deleteSubscriptionOp,
  rotateSubscriptionSecretOp,
  sendTestEventOp,
  listDeliveriesOp,
  getDeliveryOp,
  redeliverDeliveryOp,
  listAppEventsOp,
  createUploadOp,
  getUploadOp,
] as Operation[];
