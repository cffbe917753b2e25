import { createLogger, InProcessBus } from "@aps/platform";
import { APY_PROGRAM, findOnPath, startAllInOne, type AllInOne } from "@aps/all-in-one";
import { createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";

/**
 * Translation on when available (docs/design/search-and-translation.md#translation-engines): an all-in-one with no TRANSLATION_ENGINE starts
 * the real Apertium APY (Debian's `apertium-apy` + `apertium-eng-spa`) itself, says so in
 * `GET /v1/capabilities` and `/v1/me/quotas`, translates with it, and stops it on shutdown.
 * Runs only where `apertium-apy` is on the PATH (CI installs it); elsewhere it says why it skips,
 * and under APS_TEST_REQUIRE_REAL=1 a missing APY fails instead.
 */
const program = findOnPath(APY_PROGRAM, process.env.PATH);
if (!program) {
  if (process.env.APS_TEST_REQUIRE_REAL === "1")
    throw new Error(
      `APS_TEST_REQUIRE_REAL=1 but ${APY_PROGRAM} is not on the PATH (apt-get install apertium-apy apertium-eng-spa)`,
    );
  console.warn(
    `[apertium-autostart] SKIPPED: ${APY_PROGRAM} is not on the PATH (${process.env.PATH}); ` +
      "apt-get install apertium-apy apertium-eng-spa to run the all-in-one's APY start-up test",
  );
}
const pg = await hasPostgres();
if (program && !pg) console.warn("[apertium-autostart] SKIPPED: no PostgreSQL at the test address");
const enabled = !!program && pg;
/** Why the suite does not run here, for the skipped test's name (empty when it runs). */
const skipReason = !program
  ? `${APY_PROGRAM} is not on the PATH (apt-get install apertium-apy apertium-eng-spa)`
  : !pg
    ? "no PostgreSQL at the test address"
    : "";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

if (!enabled) {
  describe("the all-in-one starts Apertium APY when it is on the PATH", () => {
    it.skip(`SKIPPED: ${skipReason}`, () => undefined);
  });
}

if (enabled)
  describe("the all-in-one starts Apertium APY when it is on the PATH", () => {
    let db: TestDatabase;
    let aps: AllInOne | undefined;
    let stopped = false;
    beforeAll(async () => {
      db = await createTestDatabase();
      const log = createLogger("apy-autostart", "warn");
      const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: db.url, PORT: "0", LOG_LEVEL: "warn" };
      delete env.TRANSLATION_ENGINE;
      delete env.APS_START_APERTIUM;
      const t0 = Date.now();
      aps = await startAllInOne(env, log, new InProcessBus(log));
      console.log(`[apertium-autostart] all-in-one with APY ready in ${Date.now() - t0} ms`);
    }, 120_000);
    afterAll(async () => {
      if (!stopped) await aps?.stop();
      await db?.drop();
    });

    it("reports the engine, translates with it, and stops APY on shutdown", async () => {
      const sys = aps!;
      expect(sys.apertium).toBeDefined();
      const { pid, url } = sys.apertium!;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(alive(pid)).toBe(true);

      const caps = (await (await fetch(`${sys.baseUrl}/capabilities`)).json()) as {
        translation: { engine: string | null; ready: boolean };
      };
      expect(caps.translation.engine).toBe("apertium");
      expect(caps.translation.ready).toBe(true);

      const joined = (await (
        await fetch(`${sys.baseUrl}/join`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "apy reader" }),
        })
      ).json()) as { apiKey: string };
      const auth = { authorization: `Bearer ${joined.apiKey}` };
      const quotas = (await (await fetch(`${sys.baseUrl}/me/quotas`, { headers: auth })).json()) as {
        translations: { limit: number } | null;
      };
      expect(quotas.translations?.limit).toBeGreaterThan(0);

      const created = await fetch(`${sys.baseUrl}/posts`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({
          title: "Add a managed cache for the house",
          body: "The house needs a cache because the database is slow in the morning.",
          is_arch_design: true,
        }),
      });
      expect(created.status).toBe(201);
      const post = (await created.json()) as { id: string };
      const t = await fetch(`${sys.baseUrl}/posts/${post.id}/translation?lang=es`, { headers: auth });
      expect(t.status).toBe(200);
      const tr = (await t.json()) as { engine: string; title: string; machineTranslation: boolean };
      expect(tr.engine).toBe("apertium");
      expect(tr.machineTranslation).toBe(true);
      expect(tr.title).not.toBe("Add a managed cache for the house");
      console.log(`[apertium-autostart] "${tr.title}"`);

      stopped = true;
      await sys.stop();
      expect(alive(pid)).toBe(false);
      await expect(fetch(`${url}/listPairs`)).rejects.toThrow();
    }, 120_000);
  });
