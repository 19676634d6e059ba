import { z } from "zod";
import { WebhookEvent } from "../events/catalog";
import { Limit } from "../http/schemas";

export const ListAppEventsQuery = z.object({
  after: z
    .string()
    .max(500)
    .optional()
    .meta({ description: "A `next_cursor` from the previous page, or an event `id`: the events after it. Omit to start 30 days ago." }),
  limit: Limit,
});

export const AppEventList = z
  .object({
    data: z.array(WebhookEvent),
    next_cursor: z
      .string()
      .nullable()
      .meta({ description: "Pass as `after` for the next page; null on the last page (poll later with `after` set to the last event's `id`)." }),
  })
  .meta({ id: "AppEventList" });
