import { encode } from "next-auth/jwt";
import { afterEach, describe, expect, it } from "vitest";
import { resetEnvForTests } from "../env";
import { authSecret } from "../secrets";
import { sessionUserId } from "./session";

const before = process.env.BASE_URL;
afterEach(() => {
  if (before === undefined) delete process.env.BASE_URL;
  else process.env.BASE_URL = before;
  resetEnvForTests();
});

/** A request carrying a session for `uid` in the cookie `name`, as Auth.js writes it. */
async function withSession(name: string, uid: string): Promise<Request> {
  const value = await encode({ token: { sub: uid, uid }, secret: authSecret(), salt: name, maxAge: 3600 });
  return new Request("http://localhost/api/console/profile", { headers: { cookie: `${name}=${value}` } });
}

function servedAt(baseUrl: string) {
  process.env.BASE_URL = baseUrl;
  resetEnvForTests();
}

describe("sessionUserId: the session cookie follows BASE_URL's scheme", () => {
  it("over https reads only the __Secure- cookie: a plain one (which any page could plant) signs nobody in", async () => {
    servedAt("https://aas.example.com");
    expect(await sessionUserId(await withSession("__Secure-authjs.session-token", "usr_secure"))).toBe("usr_secure");
    expect(await sessionUserId(await withSession("authjs.session-token", "usr_planted"))).toBeNull();
  });

  it("over http reads the plain cookie, as Auth.js writes it there", async () => {
    servedAt("http://localhost:3000");
    expect(await sessionUserId(await withSession("authjs.session-token", "usr_local"))).toBe("usr_local");
    expect(await sessionUserId(await withSession("__Secure-authjs.session-token", "usr_other"))).toBeNull();
  });
});
