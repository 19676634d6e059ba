import type { z } from "zod";
import { ApiError, isProblemCode, type FieldError, type ProblemCode } from "./errors";

/** Maps zod issues to CONTRACT §3's field errors and picks the problem's code. */
export function validationError(error: z.ZodError, where: "body" | "query" | "path"): ApiError {
  const errors: FieldError[] = error.issues.flatMap((issue) => {
    // An unknown member is its own bad field: name it, not the object that holds it.
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({
        field: [...issue.path, key].join("."),
        code: "invalid_request" as const,
        detail: "is not a known field",
      }));
    }
    const field = issue.path.length ? issue.path.join(".") : where;
    let code: ProblemCode = "invalid_request";
    const custom = (issue as { params?: { code?: string } }).params?.code;
    if (custom && isProblemCode(custom)) code = custom;
    else if (issue.code === "invalid_value") code = "invalid_enum_value";
    return { field, code, detail: issue.message };
  });
  const codes = new Set(errors.map((e) => e.code));
  const code: ProblemCode = codes.size === 1 ? errors[0]!.code : "invalid_request";
  const summary = errors.map((e) => `${e.field}: ${e.detail}`).join("; ");
  return new ApiError(code, `${where === "body" ? "The request body is invalid" : `The ${where} parameters are invalid`}: ${summary}`, {
    errors,
  });
}

export function parseWith<S extends z.ZodType>(schema: S, input: unknown, where: "body" | "query" | "path"): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw validationError(r.error, where);
  return r.data;
}
