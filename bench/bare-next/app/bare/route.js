// GET /bare: the baseline the API is measured against, a route handler that does no work.
// Plain JavaScript on purpose: a .ts file here makes `next build` write a tsconfig.json and a
// next-env.d.ts into this folder, which the repository's own typecheck would then pick up.
export const dynamic = "force-dynamic";

const BODY = JSON.stringify({ id: "ath_7hQ2mN4rT1vB8kL3pZaX9c", name: "Bare Baseline", ok: true });

export function GET() {
  return new Response(BODY, { headers: { "Content-Type": "application/json" } });
}
