import { z } from "zod";
import { WebhookEvent } from "../events/catalog";
import { Cursor, Limit } from "../http/schemas";

export const ListAppEventsQuery = z
  .object({
    after: Cursor.meta({ description: "A `next_cursor` from the previous page, or an event `id`: the events after it. Omit to start 30 days ago." }),
    // Every other list pages with `cursor` (CONTRACT §5), and a client that pages them all alike
    // sends it here too: ignored, it would be given the first page again and again.
    cursor: Cursor.meta({ description: "The same as `after`, by the name every other list pages with. Send one of the two." }),
    limit: Limit,
  })
  .refine((q) => q.after === undefined || q.cursor === undefined, {
    message: "send `after` or `cursor`, not both",
    path: ["cursor"],
    params: { code: "invalid_parameter_combination" },
  });

export const AppEventList = z
  .object({
    data: z.array(WebhookEvent),
    next_cursor: z
      .string()
      .nullable()
      .meta({ description: "Pass as `after` (or `cursor`) for the next page; null on the last page (poll later with `after` set to the last event's `id`)." }),
  })
  .meta({ id: "AppEventList" });
