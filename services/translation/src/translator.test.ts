import { fileURLToPath } from "node:url";
import {
  ApsError,
  createLogger,
  migrate,
  openDatabase,
  systemClock,
  type Database,
  type ForumClient,
} from "@aps/platform";
import { ADMIN_DATABASE_URL, createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import { EngineError, type TranslationEngine } from "./engines/types.js";
import type { Lang } from "./langs.js";
import { TranslationRepository } from "./store/repository.js";
import { Translator } from "./translator.js";

/**
 * The Translator's cache, single-flight and quota rules on the real PostgreSQL with TWO replicas
 * (two Translators, two pools, one `translation` schema): the lease row makes them agree, so
 * concurrent identical generations call the engine once across both. The engine is a counting
 * test double (the real engines have their own tests); the forum is not used by documents.
 */
const log = createLogger("translator-test", "silent");
const MIGRATIONS = fileURLToPath(new URL("./store/migrations", import.meta.url));
const pgUp = await hasPostgres();
if (!pgUp)
  console.warn(`!! translator.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL}: the two-replica suite is SKIPPED`);

/** Counting engine double: answers `[lang] text` `delayMs` after the call, or fails then while `fail` is set. */
class CountingEngine implements TranslationEngine {
  readonly name = "counting";
  calls = 0;
  fail: EngineError | undefined;
  constructor(private readonly delayMs: number) {}
  translate(texts: string[], _from: Lang, to: Lang): Promise<string[]> {
    this.calls++;
    return new Promise((answer, fail) => {
      // a real engine takes a while: the answer comes late, the generation stays in flight meanwhile
      setTimeout(() => (this.fail ? fail(this.fail) : answer(texts.map((t) => `[${to}] ${t}`))), this.delayMs);
    });
  }
}

(pgUp ? describe : describe.skip)(
  "Translator on real PostgreSQL, two replicas" + (pgUp ? "" : " (SKIPPED: no PostgreSQL)"),
  () => {
    let tdb: TestDatabase;
    let dbs: Database[];
    let engine: CountingEngine;
    let replicas: Translator[];
    let repo: TranslationRepository;
    const QUOTA = 3;

    beforeAll(async () => {
      tdb = await createTestDatabase();
      // Two replicas starting at the same moment (schema creation is serialised by openDatabase).
      dbs = await Promise.all([0, 1].map(() => openDatabase({ url: tdb.url, schema: "translation", log })));
      await Promise.all(dbs.map((db) => migrate(db, MIGRATIONS, log)));
      engine = new CountingEngine(300);
      replicas = dbs.map(
        (db) =>
          new Translator(new TranslationRepository(db.pool), {} as ForumClient, engine, {
            dailyQuota: QUOTA,
            // the production default: the engine double answers in 300 ms, a loaded 2-core machine
            // must not turn that into a timeout
            timeoutMs: 20_000,
            clock: systemClock,
            log,
          }),
      );
      repo = new TranslationRepository(dbs[0]!.pool);
    });
    afterAll(async () => {
      for (const db of dbs ?? []) await db.close();
      await tdb?.drop();
    });

    it("2 × 10 concurrent identical requests → one engine call; all get the same text; one unit of quota", async () => {
      const calls0 = engine.calls;
      const all = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          replicas[i % 2]!.document("guide.md", "Hello world, this is a guide.", "en", "es", {
            agentId: "ext_A",
            source: "",
          }),
        ),
      );
      expect(engine.calls - calls0).toBe(1);
      expect(new Set(all.map((d) => d.text))).toEqual(new Set(["[es] Hello world, this is a guide."]));
      expect((await replicas[1]!.quota("ext_A")).used).toBe(1);
    });

    it("anonymous callers read only the cache", async () => {
      expect(
        (
          await replicas[1]!.document("guide.md", "Hello world, this is a guide.", "en", "es", {
            agentId: "",
            source: "",
          })
        ).text,
      ).toBe("[es] Hello world, this is a guide.");
      await expect(
        replicas[0]!.document("guide.md", "Hello world, this is a guide.", "en", "fr", { agentId: "", source: "" }),
      ).rejects.toMatchObject({ code: "translation_not_cached" });
    });

    it("an engine failure caches nothing, costs no quota, releases the lease; the next call generates", async () => {
      engine.fail = new EngineError("unavailable", "engine down");
      await expect(
        replicas[0]!.document("faq.md", "Questions and answers.", "en", "de", { agentId: "ext_B", source: "" }),
      ).rejects.toMatchObject({
        code: "upstream_unavailable",
      });
      engine.fail = new EngineError("unsupported_pair", "no pair");
      await expect(
        replicas[1]!.document("faq.md", "Questions and answers.", "en", "de", { agentId: "ext_B", source: "" }),
      ).rejects.toMatchObject({
        code: "unsupported_language_pair",
      });
      engine.fail = undefined;
      expect((await replicas[0]!.quota("ext_B")).used).toBe(0);
      const d = await replicas[1]!.document("faq.md", "Questions and answers.", "en", "de", {
        agentId: "ext_B",
        source: "",
      });
      expect(d.text).toBe("[de] Questions and answers.");
      expect((await replicas[0]!.quota("ext_B")).used).toBe(1);
    });

    it("quota: the (QUOTA+1)-th new translation of a day → quota_exceeded with Retry-After to the next UTC midnight, shared by replicas", async () => {
      for (let i = 0; i < QUOTA; i++)
        await replicas[i % 2]!.document(`doc${i}.md`, `Document number ${i}.`, "en", "ja", {
          agentId: "ext_C",
          source: "",
        });
      const asked = Date.now();
      const err = await replicas[0]!
        .document("doc-last.md", "The last document.", "en", "ja", { agentId: "ext_C", source: "" })
        .catch((e: unknown) => e);
      const answered = Date.now();
      expect(err).toBeInstanceOf(ApsError);
      expect((err as ApsError).code).toBe("quota_exceeded");
      const now = new Date();
      // seconds from an instant of the call to the next UTC midnight, rounded up: between these two
      const toMidnight = (t: number) => {
        const d = new Date(t);
        return (Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) - t) / 1000;
      };
      expect((err as ApsError).retryAfterSeconds).toBeGreaterThanOrEqual(Math.floor(toMidnight(answered)));
      expect((err as ApsError).retryAfterSeconds).toBeLessThanOrEqual(Math.ceil(toMidnight(asked)));
      const q = await replicas[1]!.quota("ext_C");
      expect(q).toEqual({
        limit: QUOTA,
        used: QUOTA,
        resetAt: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString(),
      });
    });

    it("per-source and deployment budgets (docs/design/identity-and-abuse.md#budgets-per-source): many keys of one source share one; the last stops everyone; all or nothing counted; cache still served", async () => {
      const now = new Date();
      const g0 = await repo.quotaUsed("*", now);
      const t = new Translator(new TranslationRepository(dbs[0]!.pool), {} as ForumClient, engine, {
        dailyQuota: 5,
        sourceQuota: 2,
        globalQuota: g0 + 3,
        timeoutMs: 20_000,
        clock: systemClock,
        log,
      });
      const doc = (n: number, agentId: string, source: string) =>
        t.document(`budget${n}.md`, `Budget document ${n}.`, "en", "ko", { agentId, source }).catch((e: unknown) => e);
      const codeOf = (x: unknown) => (x instanceof ApsError ? `${x.code}: ${x.message}` : "ok");
      // two keys of 203.0.113.0/24 use its budget; a third key of it gets none, though its own quota is untouched
      expect(codeOf(await doc(1, "ext_D", "203.0.113.0/24"))).toBe("ok");
      expect(codeOf(await doc(2, "ext_E", "203.0.113.0/24"))).toBe("ok");
      expect(codeOf(await doc(3, "ext_F", "203.0.113.0/24"))).toMatch(/^quota_exceeded: .*client source/);
      expect(await repo.quotaUsed("ext_F", now)).toBe(0);
      expect(await repo.quotaUsed("*", now)).toBe(g0 + 2);
      // an engine failure gives back every counter it took
      engine.fail = new EngineError("unavailable", "down");
      expect(codeOf(await doc(4, "ext_G", "198.51.100.0/24"))).toMatch(/^upstream_unavailable/);
      engine.fail = undefined;
      expect(await repo.quotaUsed("source:198.51.100.0/24", now)).toBe(0);
      expect(await repo.quotaUsed("*", now)).toBe(g0 + 2);
      // the deployment's last one, then nobody generates; the cache is still served
      expect(codeOf(await doc(4, "ext_G", "198.51.100.0/24"))).toBe("ok");
      const calls = engine.calls;
      const over = await doc(5, "ext_H", "192.0.2.0/24");
      expect(codeOf(over)).toMatch(/^quota_exceeded: this deployment's daily translation budget/);
      expect((over as ApsError).retryAfterSeconds).toBeGreaterThan(0);
      expect(engine.calls).toBe(calls);
      expect(codeOf(await doc(1, "ext_H", "192.0.2.0/24"))).toBe("ok");
      expect(await repo.quotaUsed("ext_H", now)).toBe(0);
    });

    it("a lease left by a dead replica expires and another replica takes over", async () => {
      const now = new Date();
      expect(await repo.acquireLease("x|v|es|full", "dead-holder", now, 50)).toBe(true);
      expect(await repo.acquireLease("x|v|es|full", "other", now, 50)).toBe(false);
      expect(await repo.acquireLease("x|v|es|full", "other", new Date(now.getTime() + 100), 50)).toBe(true);
    });
  },
);
