// GET /api/console/apps: the apps the person owns; POST: register one (its secret shown once).
import { z } from "zod";
import { consoleHandler, consoleRoute } from "@/lib/http/console-route";
import { ApiError } from "@/lib/http/errors";
import { AppWithSecret, DeveloperApp, RegisterAppInput } from "@/lib/oauth-clients/schemas";
import { listMyApps } from "@/lib/oauth-clients/list-my-apps";
import { MAX_URI_LENGTH, assertValidRedirectUris } from "@/lib/oauth-clients/redirect-uris";
import { registerApp } from "@/lib/oauth-clients/register-app";

/**
 * The registration's body, with its redirect URIs' problems said in the same 400 as its other
 * fields': `registerApp` checks them against the kind only once the body is valid, so a form
 * with no name and a bad redirect URI was refused for its name, and only once that was fixed for
 * the URI. A body whose every other field is valid is left to `registerApp`. A URI over 2,000
 * characters is the schema's to name (with its place in the list), not said twice.
 */
const RegisterAppBody = RegisterAppInput.check(
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

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", response: { status: 200, schema: z.array(DeveloperApp) } }, ({ ctx }) => listMyApps({ ctx })),
  POST: consoleHandler({ method: "POST", idempotent: true, body: RegisterAppBody, response: { status: 201, schema: AppWithSecret } }, ({ ctx, body }) =>
    registerApp({ ctx, input: body }),
  ),
});
