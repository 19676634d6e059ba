// /v1/athletes/me/uploads: /v1/athletes/{athlete_id}/uploads at `me`, served as a static path (lib/http/api-route.ts, `atFixedParams`).
import { atFixedParams } from "@/lib/http/api-route";
import * as byId from "../../[athlete_id]/uploads/route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = atFixedParams(byId, { athlete_id: "me" });
