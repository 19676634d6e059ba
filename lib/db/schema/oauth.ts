import { pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { users } from "./people";

/** Registered third-party apps. Secrets are stored only as SHA-256 hashes. */
export const oauthClients = pgTable("oauth_clients", {
  clientId: text("client_id").primaryKey(),
  ownerId: text("owner_id").references(() => users.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  kind: text("kind", { enum: ["confidential", "public"] }).notNull(),
  secretHash: text("secret_hash"),
  redirectUris: text("redirect_uris").array().notNull(),
  logoUrl: text("logo_url"),
  homepageUrl: text("homepage_url"),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});
