// POST /sign: the floor for POST /oauth/token: read the form, sign an RFC 9068 access token of
// the service's shape (ES256, typ at+jwt, iss, sub, aud, iat, exp, jti, client_id) with a key
// made once per process, answer as the token endpoint answers. Nothing else: no client
// authentication, no limits, no database.
import { randomUUID } from "node:crypto";
import { generateKeyPair, SignJWT } from "jose";

export const dynamic = "force-dynamic";

const ISSUER = "http://127.0.0.1";
const AUDIENCE = `${ISSUER}/v1`;
const TTL_S = 3600;
const key = generateKeyPair("ES256").then(({ privateKey }) => ({ kid: "bare-sign-key", privateKey }));

export async function POST(req) {
  const form = new URLSearchParams(await req.text());
  const clientId = form.get("client_id") ?? "bench-app";
  const { kid, privateKey } = await key;
  const token = await new SignJWT({ client_id: clientId })
    .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid })
    .setIssuer(ISSUER)
    .setSubject(clientId)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${TTL_S}s`)
    .setJti(randomUUID())
    .sign(privateKey);
  return Response.json(
    { access_token: token, token_type: "Bearer", expires_in: TTL_S },
    { headers: { "Cache-Control": "no-store", Pragma: "no-cache" } },
  );
}
