import path from "node:path";
import { describe, expect, it } from "vitest";
import { atFixedParams, ROUTE_METHODS, type RouteExports, type RouteHandler } from "./api-route";
import { routeFiles } from "../testing/route-files";

const ATHLETES = path.resolve(__dirname, "../../app/v1/athletes");
/** The route files under `dir`, as paths relative to it. */
const relativeRouteFiles = (dir: string) => routeFiles(dir).map((f) => path.relative(dir, f)).sort();

describe("static `me` routes (atFixedParams)", () => {
  it("serve every path under /v1/athletes/{athlete_id} with the same operations", async () => {
    const byId = relativeRouteFiles(path.join(ATHLETES, "[athlete_id]"));
    expect(relativeRouteFiles(path.join(ATHLETES, "me"))).toEqual(byId);
    for (const rel of byId) {
      const dynamic = (await import(path.join(ATHLETES, "[athlete_id]", rel))) as RouteExports;
      const fixed = (await import(path.join(ATHLETES, "me", rel))) as RouteExports;
      for (const m of [...ROUTE_METHODS, "OPTIONS" as const]) {
        expect(fixed[m], `${rel} ${m}`).toBeTypeOf("function");
        expect(fixed[m].operation, `${rel} ${m}`).toBe(dynamic[m].operation);
      }
    }
  });

  it("hand each handler the fixed params, whatever the route context says, and the request itself", async () => {
    const seen: { req: Request; params: unknown }[] = [];
    const handler: RouteHandler = async (req, ctx) => {
      seen.push({ req, params: await ctx.params });
      return new Response(null, { status: 204 });
    };
    const handlers = Object.fromEntries([...ROUTE_METHODS, "OPTIONS"].map((m) => [m, handler])) as RouteExports;
    const fixed = atFixedParams(handlers, { athlete_id: "me" });
    const req = new Request("http://localhost/v1/athletes/me", { method: "PATCH" });
    const res = await fixed.PATCH(req, { params: Promise.resolve({ athlete_id: "someone-else" }) });
    expect(res.status).toBe(204);
    expect(seen).toEqual([{ req, params: { athlete_id: "me" } }]);
  });
});
