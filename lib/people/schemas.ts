import { z } from "zod";

export const SignUpInput = z.object({
  name: z.string().trim().min(1, "Enter your name").max(100),
  email: z.email("Enter a valid email address").max(254).transform((e) => e.toLowerCase()),
  password: z.string().min(8, "Use at least 8 characters").max(200),
});

export const SignInInput = z.object({
  email: z.email("Enter a valid email address").max(254).transform((e) => e.toLowerCase()),
  password: z.string().min(1, "Enter your password").max(200),
});
