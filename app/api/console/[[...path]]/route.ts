// Any other /api/console path: a 404 problem document, never an HTML page.
import { notFoundRoute } from "@/lib/http/api-route";

export const GET = notFoundRoute;
export const POST = notFoundRoute;
export const PUT = notFoundRoute;
export const PATCH = notFoundRoute;
export const DELETE = notFoundRoute;
export const HEAD = notFoundRoute;
export const OPTIONS = notFoundRoute;
