import { z } from "zod";
import { hasHiddenCharacters } from "../text";
import { isValidTimezone } from "../time/local";

export const SignUpInput = z.object({
  // Shown to coaches and in other people's lists: nothing hidden that would turn it around.
  name: z
    .string()
    .trim()
    .min(1, "Enter your name")
    .max(100)
    .refine((name) => !hasHiddenCharacters(name), "Use letters, digits, spaces and punctuation: no control, bidi or zero-width characters"),
  email: z.email("Enter a valid email address").max(254).transform((e) => e.toLowerCase()),
  password: z.string().min(8, "Use at least 8 characters").max(200),
  // The browser's zone, for the profile's first one (CONTRACT §9: times read in it). One this
  // service does not know leaves the default (UTC), as no zone would: never a reason to refuse.
  timezone: z
    .string()
    .optional()
    .transform((tz) => (tz && isValidTimezone(tz) ? tz : undefined)),
});

/** A sign-up as the verbs take it: the form's, or one made in code without a zone. */
export type SignUp = Omit<z.output<typeof SignUpInput>, "timezone"> & { timezone?: string };

export const SignInInput = z.object({
  email: z.email("Enter a valid email address").max(254).transform((e) => e.toLowerCase()),
  password: z.string().min(1, "Enter your password").max(200),
});
