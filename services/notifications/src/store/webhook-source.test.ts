import { fileURLToPath } from "node:url";
import { ApsError, createLogger, migrate, openDatabase, PLATFORM_MIGRATIONS_DIR, type Database } from "@aps/platform";
import { ADMIN_DATABASE_URL, createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import { MAX_WEBHOOKS_PER_AGENT, WebhookStore } from "./webhooks.js";

/**
 * The webhooks of one client source are capped together (docs/design/notifications.md#fair-shares),
 * on the real PostgreSQL: agents of one network cannot together register more than
 * WEBHOOKS_PER_SOURCE, whatever each agent's own 5; another network is not affected; concurrent
 * registrations do not pass the cap together; webhooks of no source ("") count toward none.
 */
const log = createLogger("notifications-webhook-source-test", "silent");
const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));
const pgUp = await hasPostgres();
if (!pgUp)
  console.warn(
    `\n!! webhook-source.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the real-PostgreSQL suite is SKIPPED.\n`,
  );

(pgUp ? describe : describe.skip)(
  "webhooks per client source (real PostgreSQL; SKIPPED when none is reachable)",
  () => {
    let tdb: TestDatabase;
    let db: Database;
    beforeAll(async () => {
      tdb = await createTestDatabase();
      db = await openDatabase({ url: tdb.url, schema: "notifications", poolSize: 12, log });
      await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
    });
    afterAll(async () => {
      await db?.close();
      await tdb?.drop();
    });

    it("refuses the network's webhook past its cap with 409, lets another network and unsourced ones through, and holds under concurrency", async () => {
      const store = new WebhookStore(db.pool);
      const nat = { source: "v4:198.51.100.0/24", max: 7 };
      const register = (agent: string, source = nat) =>
        store.create(agent, "https://hooks.example/h", ["*"], "whsec_x", source).then(
          () => "ok",
          (e: unknown) => (e instanceof ApsError ? e.code : String(e)),
        );
      // two agents behind one NAT: 5 of the first, then the second reaches the network's 7
      for (let i = 0; i < MAX_WEBHOOKS_PER_AGENT; i++) expect(await register("ext_a")).toBe("ok");
      expect(await register("ext_b")).toBe("ok");
      expect(await register("ext_b")).toBe("ok");
      expect(await register("ext_b")).toBe("invalid_state");
      // a neighbour network, and a webhook of no source (a gateway of the release before)
      expect(await register("ext_c", { source: "v4:203.0.113.0/24", max: 7 })).toBe("ok");
      expect(await register("ext_d", { source: "", max: 7 })).toBe("ok");
      // 8 agents of a third network at once, cap 3: exactly 3 pass
      const burst = { source: "v4:192.0.2.0/24", max: 3 };
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => register(`ext_burst${i}`, burst)));
      expect(answers.filter((a) => a === "ok")).toHaveLength(3);
      expect(answers.filter((a) => a === "invalid_state")).toHaveLength(5);
      const held = await db.pool.query<{ source: string; n: number }>(
        "SELECT source, count(*)::int AS n FROM webhooks GROUP BY source ORDER BY source",
      );
      expect(held.rows).toEqual([
        { source: "", n: 1 },
        { source: "v4:192.0.2.0/24", n: 3 },
        { source: "v4:198.51.100.0/24", n: 7 },
        { source: "v4:203.0.113.0/24", n: 1 },
      ]);
    });
  },
);
