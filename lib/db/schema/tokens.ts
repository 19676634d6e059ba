import { index, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { users } from "./people";

export const personalAccessTokens = pgTable(
  "personal_access_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** SHA-256 of the whole token, hex. The token itself is never stored. */
    tokenHash: text("token_hash").notNull().unique(),
    lastFour: text("last_four").notNull(),
    scopes: text("scopes").array().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [index("pat_user_idx").on(t.userId)],
);
