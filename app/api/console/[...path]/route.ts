// Any other /api/console path: a 404 problem document, never an HTML page.
import { notFoundRoute } from "@/lib/http/api-route";

export { notFoundRoute as GET, notFoundRoute as POST, notFoundRoute as PUT, notFoundRoute as PATCH, notFoundRoute as DELETE };
export { notFoundRoute as HEAD, notFoundRoute as OPTIONS };
