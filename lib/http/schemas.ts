import { z } from "zod";
import { FIRST_YEAR, inServedYears, isRealLocalDate, isRealLocalDateTime, LAST_YEAR } from "../time/local";
import type { ProblemCode } from "./errors";

const YEARS_MESSAGE = `must be in the years ${FIRST_YEAR} to ${LAST_YEAR}`;

export const LocalDate = z
  .string()
  // `abort`: an object's checks across its fields (`end` after `start`) then do not run on a
  // date that is not one, which would add a second, wrong error to the one that says so.
  .refine(isRealLocalDate, { message: "must be a real date in YYYY-MM-DD form", params: { code: "invalid_date" }, abort: true })
  .refine(inServedYears, { message: YEARS_MESSAGE, params: { code: "invalid_date" }, abort: true })
  .meta({ description: `A local calendar date, \`YYYY-MM-DD\`, in the years ${FIRST_YEAR} to ${LAST_YEAR}.`, example: "2026-03-01", format: "date" });

export const LocalDateTime = z
  .string()
  .refine(isRealLocalDateTime, {
    message: "must be a real local time in YYYY-MM-DDTHH:MM:SS form, without an offset",
    params: { code: "invalid_date" },
    abort: true,
  })
  .refine(inServedYears, { message: YEARS_MESSAGE, params: { code: "invalid_date" }, abort: true })
  .meta({
    description: `Local wall-clock time with no offset, read against the athlete's \`timezone\`, in the years ${FIRST_YEAR} to ${LAST_YEAR}.`,
    example: "2026-03-01T07:30:00",
    pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}$",
  });

export const Instant = z.iso.datetime().meta({ description: "An RFC 3339 UTC instant.", example: "2026-03-01T06:30:00.000Z" });

/**
 * A whole-number query parameter from `min` (0 or more) to `max`. A query string is text, and
 * JavaScript's number coercion reads far more than integers from it (`0x10`, `1e2`, ` 5`,
 * `5.0`, an empty `limit=` as 0), so the text must be plain ASCII digits, at most 15 of them
 * (always a safe integer; no sign: no such parameter takes a negative). A number is taken as it
 * is: the MCP tools share these schemas and get their arguments as JSON numbers. Either way the
 * value is then an integer from `min` to `max`, and a wrong one names the parameter.
 */
export function queryInteger({ min, max }: { min: number; max: number }) {
  return z.preprocess((value, ctx) => {
    if (typeof value !== "string") return value;
    if (/^\d{1,15}$/.test(value)) return Number(value);
    ctx.addIssue({ code: "custom", message: "must be a whole number in plain decimal digits (0-9)", input: value });
    return z.NEVER;
  }, z.number().int({ error: "must be a whole number" }).min(min).max(max));
}

// `prefault`, not `default`: the JSON Schema of a value read from text (input mode, as the
// OpenAPI parameters and the MCP tools' inputSchema are) keeps a prefault as its `default`.
export const Limit = queryInteger({ min: 1, max: 200 })
  .prefault(50)
  .meta({ description: "Page size, 1 to 200 (in a query string: plain decimal digits, such as `50`).", example: 50 });

export const Cursor = z
  .string()
  // Empty (`?cursor=`): a client that wrote a last page's null `next_cursor` as "" would
  // otherwise get page 1 again, and page on forever. Stripe refuses an empty `starting_after` too.
  .refine((c) => c.length > 0, { message: "is empty: leave it out for the first page", params: { code: "invalid_cursor" }, abort: true })
  // Longer than any cursor the API issues: not one of its cursors (CONTRACT §3 `invalid_cursor`).
  .refine((c) => c.length <= 500, { message: "is not one this API returned", params: { code: "invalid_cursor" }, abort: true })
  .optional()
  .meta({ description: "The `next_cursor` of the previous page.", minLength: 1, maxLength: 500 });

/** A range of local dates, `[start, end)`, either end optional. */
type DateRange = { start?: string; end?: string };

/**
 * The rule of every query over a range of local dates (CONTRACT §5): `end` before `start` is
 * `invalid_parameter_combination`; the same date is an empty range. `.refine(...endNotBeforeStart)`.
 */
export const endNotBeforeStart: [(q: DateRange) => boolean, { message: string; path: string[]; params: { code: ProblemCode } }] = [
  (q) => !q.start || !q.end || q.end >= q.start,
  { message: "end must not be before start", path: ["end"], params: { code: "invalid_parameter_combination" } },
];

/**
 * The query of a list over a range of local dates, a page at a time, with the list's own
 * `filters` between the range and the page. One definition for every such list (activities,
 * metrics).
 */
export function dateRangeListQuery<T extends z.ZodRawShape>(startDescription: string, filters: T) {
  const [check, error] = endNotBeforeStart;
  return z
    .object({
      start: LocalDate.optional().meta({ description: startDescription }),
      end: LocalDate.optional().meta({ description: "Local date at which the range ends, excluded." }),
      ...filters,
      limit: Limit,
      cursor: Cursor,
    })
    // TypeScript cannot see `start` and `end` through the spread of a generic shape: they are the two above.
    .refine((q) => check(q as DateRange), error);
}

export function listOf<T extends z.ZodType>(item: T, id: string) {
  return z
    .object({
      data: z.array(item),
      next_cursor: z.string().nullable().meta({ description: "Pass as `cursor` for the next page; null on the last page." }),
    })
    .meta({ id });
}

/**
 * Path ids that name what a token reaches, not a resource it owns: every one the token cannot
 * reach answers the same 403, one that cannot be an id of this API too, so ids cannot be probed
 * (SPEC §4.1). Any other path id the API does not make is 404 (lib/http/api-route.ts).
 */
export const reachedIds = z.registry<{ reach: "athlete" | "team" }>();

/** `me` or an athlete id. */
export const AthleteIdParam = z
  .string()
  .min(1)
  .max(64)
  .meta({ description: "An athlete id, or `me` for the token's own athlete.", example: "me" })
  .register(reachedIds, { reach: "athlete" });

/** A team the token's owner coaches or administers. */
export const TeamIdParam = z.string().min(1).max(64).meta({ description: "A team id.", example: "team_…" }).register(reachedIds, { reach: "team" });

/** An `Idempotency-Key`: 1 to 255 visible ASCII characters, as the service checks it (assertIdempotencyKeyForm) and the OpenAPI document says. */
export const IdempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/);
