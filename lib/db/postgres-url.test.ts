import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { openDatabase, rowsOf } from "./client";
import { postgresConnection } from "./postgres-url";

describe("postgresConnection", () => {
  it("takes a Unix socket's directory from a host parameter, out of the URL", () => {
    expect(postgresConnection("postgres://me@localhost/aas?host=/var/run/postgresql&max=3")).toEqual({
      url: "postgres://me@localhost/aas?max=3",
      options: { host: "/var/run/postgresql" },
    });
    expect(postgresConnection("postgres:///aas?host=/tmp").options).toEqual({ host: "/tmp" });
  });

  it("takes a percent-encoded directory in place of the host", () => {
    expect(postgresConnection("postgres://me@%2Fvar%2Frun%2Fpostgresql/aas").options).toEqual({ host: "/var/run/postgresql" });
  });

  it("takes a host name or a port given as parameters", () => {
    expect(postgresConnection("postgres://me@localhost/aas?host=db.internal&port=6432")).toEqual({
      url: "postgres://me@localhost/aas",
      options: { host: "db.internal", port: 6432 },
    });
  });

  it("refuses a port that is not one, saying which setting", () => {
    for (const port of ["0", "65536", "5432x", "-1", ""]) {
      expect(() => postgresConnection(`postgres://me@localhost/aas?port=${port}`), port).toThrow(/DATABASE_URL: port=/);
    }
  });

  it("leaves a URL postgres.js reads already as it is", () => {
    for (const url of [
      "postgres://me:pw@127.0.0.1:5432/aas?max=4&prepare=false",
      "postgres://me@db.internal/aas?sslmode=require",
      "postgres://me:p%40ss@h1:5432,h2:5433/aas",
      "postgresql://me@db.internal/aas",
      "postgres:///aas",
    ]) {
      expect(postgresConnection(url)).toEqual({ url, options: {} });
    }
  });

  it("takes a user before an empty host, libpq's form postgres.js cannot read, as its options", () => {
    expect(postgresConnection("postgres://me:p%40ss@/aas?host=/var/run/postgresql")).toEqual({
      url: "postgres:///aas",
      options: { host: "/var/run/postgresql", user: "me", pass: "p@ss" },
    });
  });

  it("refuses what postgres.js could not read, naming DATABASE_URL", () => {
    for (const url of ["not a url", "notaurl", "http://x/aas", "postgres://me@h:abc/aas", "postgres://me@h 1/aas", "postgres://me:100%@h/aas", "postgres://h1,h 2/aas"]) {
      expect(() => postgresConnection(url), url).toThrow(/^DATABASE_URL: /);
    }
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)("the service's database over PostgreSQL's Unix socket", () => {
  it("opens it from either of libpq's forms and runs statements over the socket", async () => {
    const base = new URL(process.env.TEST_DATABASE_URL!);
    const user = decodeURIComponent(base.username) || "postgres";
    const admin = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
    const db = `aas_test_${randomBytes(6).toString("hex")}`;
    try {
      // The server's socket directory, asked over TCP; a server without one fails the test.
      const [row] = await admin<{ unix_socket_directories: string }[]>`show unix_socket_directories`;
      const dir = row!.unix_socket_directories.split(",")[0]!.trim();
      expect(dir.startsWith("/")).toBe(true);
      await admin.unsafe(`create database ${db}`);
      for (const url of [`postgres://${user}@localhost/${db}?host=${dir}`, `postgres://${user}@${encodeURIComponent(dir)}/${db}`]) {
        const handle = await openDatabase({ url, max: 1 });
        try {
          // inet_server_addr() is null on a Unix-socket connection.
          const rows = rowsOf<{ addr: string | null; db: string }>(await handle.db.execute(sql`select inet_server_addr() as addr, current_database() as db`));
          expect(rows, url).toEqual([{ addr: null, db }]);
        } finally {
          await handle.close();
        }
      }
    } finally {
      await admin.unsafe(`drop database if exists ${db} with (force)`);
      await admin.end();
    }
  });
});
