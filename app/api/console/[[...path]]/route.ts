// Any other /api/console path: a 404 problem document, never an HTML page.
import { consoleNotFoundRoute } from "@/lib/http/api-route";

export const GET = consoleNotFoundRoute;
export const POST = consoleNotFoundRoute;
export const PUT = consoleNotFoundRoute;
export const PATCH = consoleNotFoundRoute;
export const DELETE = consoleNotFoundRoute;
export const HEAD = consoleNotFoundRoute;
export const OPTIONS = consoleNotFoundRoute;
