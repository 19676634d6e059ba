import { z } from "zod";
import { HIDDEN_IN_NAME_MESSAGE, hasHiddenCharacters } from "../text";
import { Instant } from "../http/schemas";
import { ApiError } from "../http/errors";
import { MAX_REDIRECT_URIS, MAX_URI_LENGTH, assertValidRedirectUris, pageUrlProblem, tooLongRedirectUri } from "./redirect-uris";

// The console's view of the apps a developer owns. Redirect URIs are checked against the
// app's kind by the verbs (redirect-uris.ts), since an edit does not resend the kind.

export const AppKind = z.enum(["confidential", "public"]);

const AppName = z
  .string()
  .trim()
  .min(1, "give the app a name")
  .max(100, "use at most 100 characters")
  .refine((name) => !hasHiddenCharacters(name), HIDDEN_IN_NAME_MESSAGE);

const RedirectUriList = z
  // Said with the URI it is about: the list's field errors are shown together, under the box.
  .array(z.string().max(MAX_URI_LENGTH, { error: (issue) => tooLongRedirectUri(String(issue.input), issue.path?.at(-1)) }))
  .min(1, "register at least one redirect URI")
  .max(MAX_REDIRECT_URIS, `register at most ${MAX_REDIRECT_URIS} redirect URIs`);

/** An https URL; null or an empty string clears it. */
const PageUrl = z
  .string()
  .trim()
  .nullable()
  .transform((v) => (v ? v : null))
  .superRefine((v, ctx) => {
    const problem = v === null ? null : pageUrlProblem(v);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

export const RegisterAppInput = z.strictObject({
  name: AppName,
  kind: AppKind,
  redirect_uris: RedirectUriList,
  logo_url: PageUrl.optional(),
  homepage_url: PageUrl.optional(),
});

/**
 * The registration's body, with its redirect URIs' problems said in the same 400 as its other
 * fields': `registerApp` checks them against the kind only once the body is valid, so a form
 * with no name and a bad redirect URI was refused for its name, and only once that was fixed for
 * the URI. A body whose every other field is valid is left to `registerApp`. A URI over 2,000
 * characters is the schema's to name (with its place in the list), not said twice.
 */
export const RegisterAppBody = RegisterAppInput.check(
  z.superRefine(
    (value, ctx) => {
      const { kind, redirect_uris: uris } = (value ?? {}) as { kind?: unknown; redirect_uris?: unknown };
      if ((kind !== "confidential" && kind !== "public") || !Array.isArray(uris) || !uris.every((u) => typeof u === "string")) return;
      // registerApp's own words, each said once (the list's length is the schema's to say too).
      const said = new Set(ctx.issues.map((i) => `${(i.path ?? []).join(".")} ${i.message}`));
      const add = (path: (string | number)[], message: string) => {
        if (!said.has(`${path.join(".")} ${message}`)) ctx.addIssue({ code: "custom", path, message });
      };
      const problems = (list: string[]) => {
        try {
          assertValidRedirectUris(list, kind);
          return [];
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          return err.errors ?? [];
        }
      };
      const checkable = (u: string) => u.trim() !== "" && u.length <= MAX_URI_LENGTH;
      for (const e of problems(uris.filter(checkable))) if (e.field === "redirect_uris") add(["redirect_uris"], e.detail);
      // Each URI by its place in the list sent, as the schema names one too long.
      uris.forEach((u, i) => {
        if (checkable(u)) for (const e of problems([u])) add(["redirect_uris", i], e.detail);
      });
    },
    { when: (payload) => payload.issues.length > 0 },
  ),
);
export type RegisterAppInput = z.output<typeof RegisterAppInput>;

/** Members sent are changed; the kind is fixed once registered. */
export const UpdateAppInput = z.strictObject({
  name: AppName.optional(),
  redirect_uris: RedirectUriList.optional(),
  logo_url: PageUrl.optional(),
  homepage_url: PageUrl.optional(),
});
export type UpdateAppInput = z.output<typeof UpdateAppInput>;

export const DeveloperApp = z.object({
  client_id: z.string(),
  name: z.string(),
  kind: AppKind,
  redirect_uris: z.array(z.string()),
  logo_url: z.string().nullable(),
  homepage_url: z.string().nullable(),
  /** Athletes whose authorization of the app is in force. */
  connected_athletes: z.number().int(),
  created_at: Instant,
});
export type DeveloperApp = z.output<typeof DeveloperApp>;

/** Registration and rotation answers: the only time the secret is ever shown. */
export const AppWithSecret = z.object({ app: DeveloperApp, client_secret: z.string().nullable() });
export type AppWithSecret = z.output<typeof AppWithSecret>;

export const DeletedApp = z.object({ client_id: z.string(), deleted: z.literal(true) });
