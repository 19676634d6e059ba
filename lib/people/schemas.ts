import { z } from "zod";
import { hasHiddenCharacters } from "../text";

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
});

export const SignInInput = z.object({
  email: z.email("Enter a valid email address").max(254).transform((e) => e.toLowerCase()),
  password: z.string().min(1, "Enter your password").max(200),
});
