import "server-only";
import { headers } from "next/headers";
import { getEnv } from "../env";
import { clientAddress } from "../http/client-address";

/** The address of the caller of a server action, decided as for a route handler's request. */
export async function actionClientAddress(): Promise<string> {
  return clientAddress(new Request(getEnv().baseUrl, { headers: await headers() }));
}
