// GET, POST /api/auth/*: Auth.js (sign-in, sign-out, session, CSRF token), its bodies bounded.
import { handlers } from "@/lib/auth/next-auth";
import { withBodyLimit } from "@/lib/auth/body-limit";

export const { GET } = handlers;
export const POST = withBodyLimit(handlers.POST);
