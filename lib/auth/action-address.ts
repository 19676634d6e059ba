import "server-only";
import { getEnv } from "../env";
import { clientAddress } from "../http/client-address";

/**
 * The address of the caller of a server action, decided as for a route handler's request.
 * The action passes its request's headers (next/headers): lib stays outside Next.js's request scope.
 */
export function actionClientAddress(requestHeaders: HeadersInit): string {
  return clientAddress(new Request(getEnv().baseUrl, { headers: requestHeaders }));
}
