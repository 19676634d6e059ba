import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../openapi/operations";
import { SCOPES } from "./scopes";

// What an athlete reads on the consent screen is all they learn of what an app may do: each
// scope's words name every kind of change an operation under it makes.
describe("a scope's plain words", () => {
  it("name deleting and uploading where an operation under the scope deletes or uploads", () => {
    const checked: string[] = [];
    for (const op of OPERATIONS) {
      if (!op.scope) continue;
      const words = SCOPES[op.scope].plain.toLowerCase();
      if (op.method === "DELETE") {
        expect(words, `${op.method} ${op.path}`).toContain("delete");
        checked.push(`${op.method} ${op.path}`);
      }
      if (op.multipart) {
        expect(words, `${op.method} ${op.path}`).toContain("upload");
        checked.push(`${op.method} ${op.path}`);
      }
    }
    // The activity's delete and the file upload are among them.
    expect(checked).toEqual(expect.arrayContaining(["DELETE /v1/activities/{activity_id}", "POST /v1/athletes/me/uploads"]));
  });
});
