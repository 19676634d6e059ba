import { sql } from "drizzle-orm";
import { index, jsonb, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { users } from "./people";

/** The resources this server issues tokens for (RFC 8707): `{base_url}/v1` and `{base_url}/mcp`. */
export const TOKEN_RESOURCES = ["v1", "mcp"] as const;
export type TokenResource = (typeof TOKEN_RESOURCES)[number];

/**
 * How a client came to be known: created by a developer in the console, described by a Client
 * ID Metadata Document at its `client_id` URL, or registered by Dynamic Client Registration
 * (RFC 7591). The last two are clients the service has never reviewed (CONTRACT §12).
 */
export const CLIENT_REGISTRATIONS = ["console", "metadata_document", "dynamic"] as const;
export type ClientRegistration = (typeof CLIENT_REGISTRATIONS)[number];

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
  registration: text("registration", { enum: CLIENT_REGISTRATIONS }).notNull().default("console"),
  /** Where an unreviewed client comes from, as the consent screen names it: its metadata URL's host, or its first redirect URI's. */
  sourceHost: text("source_host"),
  /** A metadata-document client: when the stored document was fetched, and until when it may be used without fetching again. */
  metadataFetchedAt: timestamp("metadata_fetched_at", { withTimezone: true }),
  metadataExpiresAt: timestamp("metadata_expires_at", { withTimezone: true }),
});

/**
 * An athlete's authorization of an app. A new authorization after a disconnect is a new row,
 * so tokens of the old one can never come back to life.
 */
export const oauthGrants = pgTable(
  "oauth_grants",
  {
    id: text("id").primaryKey(),
    clientId: text("client_id")
      .notNull()
      .references(() => oauthClients.clientId, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    scopes: text("scopes").array().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    /** The last request made with one of its access tokens, to the minute (shown on /settings/apps). */
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("oauth_grants_active_idx").on(t.clientId, t.userId).where(sql`${t.revokedAt} is null`),
    index("oauth_grants_user_idx").on(t.userId),
  ],
);

/**
 * The tokens issued from one authorization code: the first access and refresh token and
 * every rotation after. Revoking the family (code replay, refresh reuse, revocation) stops
 * them all; access tokens carry the family id and are checked against it on every request.
 */
export const oauthTokenFamilies = pgTable(
  "oauth_token_families",
  {
    id: text("id").primaryKey(),
    grantId: text("grant_id")
      .notNull()
      .references(() => oauthGrants.id, { onDelete: "cascade" }),
    scopes: text("scopes").array().notNull(),
    /** The resource its access tokens are for (their `aud`); a refresh keeps it. */
    resource: text("resource", { enum: TOKEN_RESOURCES }).notNull().default("v1"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [index("oauth_token_families_grant_idx").on(t.grantId)],
);

/** Authorization codes: 60 seconds, single use, stored as hashes. */
export const oauthCodes = pgTable("oauth_codes", {
  codeHash: text("code_hash").primaryKey(),
  clientId: text("client_id")
    .notNull()
    .references(() => oauthClients.clientId, { onDelete: "cascade" }),
  grantId: text("grant_id")
    .notNull()
    .references(() => oauthGrants.id, { onDelete: "cascade" }),
  redirectUri: text("redirect_uri").notNull(),
  scopes: text("scopes").array().notNull(),
  codeChallenge: text("code_challenge").notNull(),
  /** The resource the authorization request named (RFC 8707); the tokens it gives are for it. */
  resource: text("resource", { enum: TOKEN_RESOURCES }).notNull().default("v1"),
  expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  usedAt: timestamp("used_at", { withTimezone: true }),
  /** The family the exchange created, revoked if the code is ever replayed. */
  familyId: text("family_id"),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

/** Refresh tokens, stored as hashes. `rotatedAt` is set when used; a second use is reuse. */
export const oauthRefreshTokens = pgTable(
  "oauth_refresh_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    familyId: text("family_id")
      .notNull()
      .references(() => oauthTokenFamilies.id, { onDelete: "cascade" }),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    rotatedAt: timestamp("rotated_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("oauth_refresh_tokens_family_idx").on(t.familyId)],
);

/** Token-signing keys, generated once and kept in the database so every instance signs alike. */
export const signingKeys = pgTable("signing_keys", {
  kid: text("kid").primaryKey(),
  alg: text("alg").notNull(),
  privateJwk: jsonb("private_jwk").notNull(),
  publicJwk: jsonb("public_jwk").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  /** Set when a newer key takes over signing; the key stays published until its tokens expire. */
  retiredAt: timestamp("retired_at", { withTimezone: true }),
});
