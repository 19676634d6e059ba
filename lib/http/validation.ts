import { z } from "zod";
import { printableExcerpt } from "../text";
import { ApiError, isProblemCode, type FieldError, type ProblemCode } from "./errors";

/**
 * How many of a request's problems a 400 lists (`errors` and its detail), and how many
 * characters of an unknown member's name it repeats: a body of 80,000 unknown members, or one
 * member with a 1 MB name, would otherwise be answered with a problem many times its size.
 */
export const MAX_LISTED_ERRORS = 20;
const MAX_FIELD_CHARS = 200;

/** Maps zod issues to CONTRACT §3's field errors and picks the problem's code. */
export function validationError(error: z.ZodError, where: "body" | "query" | "path" | "arguments", { listed = MAX_LISTED_ERRORS } = {}): ApiError {
  const all: FieldError[] = tightestBounds(error.issues).flatMap((issue) => {
    // An unknown member is its own bad field: name it, not the object that holds it.
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({
        field: [...issue.path, key.length > MAX_FIELD_CHARS ? printableExcerpt(key.slice(0, MAX_FIELD_CHARS * 2), MAX_FIELD_CHARS) : key].join("."),
        code: "invalid_request" as const,
        detail: where === "query" ? "is not a known parameter" : "is not a known field",
      }));
    }
    // A query parameter is flat text: a list it holds (`keys=a,b`) is split only to be checked,
    // and the bad field is the parameter, not a position inside it. An MCP tool's arguments are
    // the query parameters of the /v1 read it wraps (and an id), named as /v1 names them.
    const flat = where === "query" || where === "arguments";
    const field = !issue.path.length ? where : flat ? String(issue.path[0]) : issue.path.join(".");
    let code: ProblemCode = "invalid_request";
    const custom = (issue as { params?: { code?: string } }).params?.code;
    if (custom && isProblemCode(custom)) code = custom;
    // An unknown value of an enum is text that names none of its values; a member left out, or
    // of another type (`null`, a number, a list), is a malformed request, as for any field.
    else if (issue.code === "invalid_value" && (!("input" in issue) || typeof issue.input === "string")) code = "invalid_enum_value";
    const within = flat && issue.path.length > 1 ? `item ${typeof issue.path[1] === "number" ? issue.path[1] + 1 : String(issue.path[1])}: ` : "";
    return { field, code, detail: within + issue.message };
  });
  const errors = all.length > listed ? all.slice(0, listed) : all;
  // The problem's code is the listed errors' one when they share it, so it matches what is shown.
  const codes = new Set(errors.map((e) => e.code));
  const code: ProblemCode = codes.size === 1 ? errors[0]!.code : "invalid_request";
  const more = all.length - errors.length;
  const summary = errors.map((e) => `${e.field}: ${e.detail}`).join("; ") + (more ? `; and ${more} more` : "");
  const what = where === "body" ? "The request body is" : where === "arguments" ? "The arguments are" : `The ${where} parameters are`;
  return new ApiError(code, `${what} invalid: ${summary}`, {
    errors,
  });
}

type Issue = z.ZodError["issues"][number];

/**
 * The issues, with a value past two bounds of one kind on one field (an integer's safe range and
 * the field's own maximum, `1e20` seconds) named once, by the tighter bound: the field's own,
 * which is the one a caller has to meet.
 */
function tightestBounds(issues: readonly Issue[]): Issue[] {
  const key = (i: Issue) => `${i.code} ${JSON.stringify(i.path)}`;
  const bound = (i: Issue) => (i.code === "too_big" ? -Number(i.maximum) : i.code === "too_small" ? Number(i.minimum) : 0);
  const tightest = new Map<string, Issue>();
  for (const i of issues) {
    if (i.code !== "too_big" && i.code !== "too_small") continue;
    const seen = tightest.get(key(i));
    if (!seen || bound(i) > bound(seen)) tightest.set(key(i), i);
  }
  return issues.filter((i) => (i.code !== "too_big" && i.code !== "too_small") || tightest.get(key(i)) === i);
}

/**
 * Whether PostgreSQL can store a string as text and give the same string back: not with a NUL
 * character, which it refuses outright (a 500 if it got that far), nor with an unpaired
 * surrogate (valid in a JSON escape, `"\ud800"`, but not Unicode), which it would store as
 * U+FFFD. Every input that reaches a query as text is held to this, wherever it enters.
 */
export function isStorableText(s: string): boolean {
  return !s.includes("\u0000") && s.isWellFormed();
}

/**
 * The paths (`a.0.b`) of the strings and member names in `input` that are not storable text
 * (`isStorableText`), at most 20. Walked without recursion, so any depth of nesting the JSON
 * parser accepted is fine here.
 */
export function unstorableText(input: unknown): string[] {
  const bad: string[] = [];
  const stack: [unknown, string][] = [[input, ""]];
  while (stack.length && bad.length < 20) {
    const [value, path] = stack.pop()!;
    if (typeof value === "string") {
      if (!isStorableText(value)) bad.push(path);
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], path ? `${path}.${i}` : String(i)]);
    } else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) {
        const at = path ? `${path}.${k}` : k;
        if (!isStorableText(k)) bad.push(at);
        else stack.push([v, at]);
      }
    }
  }
  return bad;
}

/**
 * The words for a member the input lacks: "is required", where zod's own say "Invalid input:
 * expected string, received undefined". JSON has no `undefined`, so an issue whose input is
 * undefined is a missing member (or query parameter). A schema's own message comes first; any
 * other issue keeps zod's words (undefined falls through to them). /mcp's tool arguments are
 * read with it too, so a tool error says what /v1 says of the same input.
 */
export const missingIsRequired = (issue: { code: string; input?: unknown }): string | undefined =>
  issue.input === undefined && (issue.code === "invalid_type" || issue.code === "invalid_union" || issue.code === "invalid_value") ? "is required" : undefined;

export function parseWith<S extends z.ZodType>(schema: S, input: unknown, where: "body" | "query" | "path"): z.output<S> {
  const unstorable = unstorableText(input);
  if (unstorable.length) {
    const errors: FieldError[] = unstorable.slice(0, MAX_LISTED_ERRORS).map((field) => ({
      field: (field || where).slice(0, MAX_FIELD_CHARS).replace(/[^\x20-\x7e]/g, "?"),
      code: "invalid_request",
      detail: "must be Unicode text without NUL characters",
    }));
    const more = unstorable.length - errors.length;
    const named = errors.map((e) => e.field).join(", ") + (more ? `, and ${more} more` : "");
    throw new ApiError("invalid_request", `${where === "body" ? "The request body contains" : `The ${where} parameters contain`} text that is not valid Unicode or holds a NUL character: ${named}`, { errors });
  }
  const r = schema.safeParse(input, { error: missingIsRequired, reportInput: true });
  if (!r.success) throw validationError(r.error, where);
  return r.data;
}

/** Each route's query schema made strict once (`strict()` keeps its refinements). */
const strictQueries = new WeakMap<z.ZodType, z.ZodType>();

function strictQuery(schema: z.ZodType): z.ZodType {
  let strict = strictQueries.get(schema);
  if (!strict) strictQueries.set(schema, (strict = schema instanceof z.ZodObject ? schema.strict() : schema));
  return strict;
}

/**
 * The query string parsed by the route's schema. Each parameter takes one value: one given more
 * than once (`?sport_type=run&sport_type=ride`) is refused, naming it, where reading it as an
 * object would quietly keep the last value and answer as if the others had not been sent (a
 * multipart form's repeated field is refused the same way). Lists are one comma-separated value.
 * A parameter the route does not know is refused too, as a body's unknown member is: a Strava
 * client's `per_page` or `after`, or a typo, would otherwise get the whole list unfiltered.
 */
export function parseQuery<S extends z.ZodType>(schema: S, searchParams: URLSearchParams): z.output<S> {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const name of searchParams.keys()) (seen.has(name) ? repeated : seen).add(name);
  if (repeated.size) {
    const errors: FieldError[] = [...repeated].slice(0, 20).map((name) => ({
      field: name.replace(/[^\x20-\x7e]/g, "?"),
      code: "invalid_request",
      detail: "is given more than once; each query parameter takes one value (a list is one comma-separated value)",
    }));
    throw new ApiError("invalid_request", `The query parameters are invalid: ${errors.map((e) => `${e.field}: is given more than once`).join("; ")}`, { errors });
  }
  return parseWith(strictQuery(schema), Object.fromEntries(searchParams), "query") as z.output<S>;
}
