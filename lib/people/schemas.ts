import { z } from "zod";
import { hasHiddenCharacters } from "../text";
import { canonicalTimezone } from "../time/local";

/**
 * A sign-up: email and password (CONTRACT §9 names only those two fields), and a name if the
 * person gives one. Without one, the email's part before the @ stands in until they set theirs
 * on the profile.
 */
export const SignUpInput = z
  .object({
    // Shown to coaches and in other people's lists: nothing hidden that would turn it around.
    name: z
      .string()
      .trim()
      .max(100)
      .refine((name) => !hasHiddenCharacters(name), "Use letters, digits, spaces and punctuation: no control, bidi or zero-width characters")
      .optional(),
    email: z.email("Enter a valid email address").max(254).transform((e) => e.toLowerCase()),
    password: z.string().min(8, "Use at least 8 characters").max(200),
    // The browser's zone, for the profile's first one (CONTRACT §9: times read in it). One this
    // service does not know leaves the default (UTC), as no zone would: never a reason to refuse.
    timezone: z
      .string()
      .optional()
      .transform((tz) => (tz ? canonicalTimezone(tz) : undefined)),
  })
  .transform(({ name, ...rest }) => ({ ...rest, name: name || nameFromEmail(rest.email) }));

/** The part of an address before its @, at most 100 characters: a name to start with. */
export function nameFromEmail(email: string): string {
  return email.slice(0, email.lastIndexOf("@")).slice(0, 100) || email.slice(0, 100);
}

/** A sign-up as the verbs take it: the form's, or one made in code without a zone. */
export type SignUp = Omit<z.output<typeof SignUpInput>, "timezone"> & { timezone?: string };

export const SignInInput = z.object({
  email: z.email("Enter a valid email address").max(254).transform((e) => e.toLowerCase()),
  password: z.string().min(1, "Enter your password").max(200),
});
