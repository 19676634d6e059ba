// GET, POST /api/auth/*: Auth.js (sign-in, sign-out, session, CSRF token), its bodies bounded;
// a sign-in refused by a limit is a 429 with Retry-After (CONTRACT §10).
import { handlers } from "@/lib/auth/next-auth";
import { withBodyLimit } from "@/lib/auth/body-limit";
import { answeringLimitsWith429 } from "@/lib/auth/signin-refusal";

export const { GET } = handlers;
export const POST = withBodyLimit(answeringLimitsWith429(handlers.POST));
