import { readFileSync } from "node:fs";
import { createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import { createLogger } from "../log.js";
import { metricsRegistry } from "../metrics.js";
import { openDatabase } from "./database.js";

const pgUp = await hasPostgres();
if (!pgUp) console.warn("[pool-metrics.test] NO PostgreSQL at 127.0.0.1:5432: the pool gauge tests are SKIPPED");

/** The value of `name{labels}` in the registry's text, or undefined when the series is absent. */
async function sample(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of (await metricsRegistry.metrics()).split("\n")) {
    const m = /^(\w+)\{([^}]*)\} (\S+)$/.exec(line);
    if (m?.[1] === name && want.every((w) => m[2]!.split(",").includes(w))) return Number(m[3]);
  }
  return undefined;
}

describe("aps_build_info", () => {
  it("is 1, with the platform's version, the revision from APS_BUILD_REVISION and the node runtime", async () => {
    const before = process.env.APS_BUILD_REVISION;
    process.env.APS_BUILD_REVISION = "0123abc";
    try {
      const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
        version: string;
      };
      expect(await sample("aps_build_info", { revision: "0123abc", node: process.version, version })).toBe(1);
    } finally {
      if (before === undefined) delete process.env.APS_BUILD_REVISION;
      else process.env.APS_BUILD_REVISION = before;
    }
  });
});

(pgUp ? describe : describe.skip)(
  pgUp
    ? "aps_db_pool_connections (real PostgreSQL)"
    : "aps_db_pool_connections — SKIPPED: no PostgreSQL at 127.0.0.1:5432",
  () => {
    let tdb: TestDatabase;
    beforeAll(async () => {
      tdb = await createTestDatabase();
    });
    afterAll(async () => {
      await tdb?.drop();
    });

    it("counts a service's busy, idle and waiting connections and its max, and forgets a closed pool", async () => {
      const schema = `pool_gauge_${Math.random().toString(36).slice(2, 8)}`;
      const db = await openDatabase({
        url: tdb.url,
        schema,
        poolSize: 2,
        log: createLogger("pool-metrics-test", "warn"),
      });
      const held = await Promise.all([db.pool.connect(), db.pool.connect()]);
      // a third client waits: the pool is at its max of 2
      const third = db.pool.connect();
      try {
        expect(await sample("aps_db_pool_connections", { service: schema, state: "busy" })).toBe(2);
        expect(await sample("aps_db_pool_connections", { service: schema, state: "total" })).toBe(2);
        expect(await sample("aps_db_pool_connections", { service: schema, state: "waiting" })).toBe(1);
        expect(await sample("aps_db_pool_connections", { service: schema, state: "max" })).toBe(2);
        held[0].release();
        // the waiting client takes the released connection
        const c = await third;
        c.release();
        held[1].release();
        expect(await sample("aps_db_pool_connections", { service: schema, state: "idle" })).toBe(2);
        expect(await sample("aps_db_pool_connections", { service: schema, state: "waiting" })).toBe(0);
      } finally {
        await db.close();
      }
      expect(await sample("aps_db_pool_connections", { service: schema, state: "total" })).toBeUndefined();
    });
  },
);
