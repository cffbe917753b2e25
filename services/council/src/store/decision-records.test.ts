import { fileURLToPath } from "node:url";
import { ApsError, createLogger, migrate, openDatabase, PLATFORM_MIGRATIONS_DIR, type Database } from "@aps/platform";
import { events } from "@aps/proto";
import { createTestDatabase, hasPostgres, SetClock, type TestDatabase } from "@aps/testkit";
import { CaseActions } from "./case-actions.js";
import { CouncilAttention } from "./attention.js";
import { CouncilRepository } from "./repository.js";

/**
 * Decision records and links on the real PostgreSQL (docs/reference/council.md "Decision
 * records", "Links"): who decided a case, who may state it, the review date announced once, and
 * an adoption that supersedes the decided proposals it links to. Time moves by an injected clock.
 */
const log = createLogger("council-decision-records-test", "silent");
const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));
const pgUp = await hasPostgres();
if (!pgUp) console.warn("!! council decision-records.test.ts: NO POSTGRESQL — the decision-record suite is SKIPPED");

const DAY = 86_400_000;

(pgUp ? describe : describe.skip)(
  "decision records and links on the real PostgreSQL (SKIPPED without PostgreSQL)",
  () => {
    let tdb: TestDatabase;
    let db: Database;
    let clock: SetClock;
    let repo: CouncilRepository;
    let actions: CaseActions;
    let n = 0;
    const post = () => `p_dr${String(++n).padStart(4, "0")}`;
    const later = (ms: number) => (clock.at = new Date(clock.at.getTime() + ms));
    const code = (p: Promise<unknown>) =>
      p.then(
        () => "ok",
        (e: unknown) => (e instanceof ApsError ? e.code : String(e)),
      );
    /** Payloads of `subject` in the outbox about `postId`, oldest first. */
    async function published<T>(subject: string, decode: (b: Buffer) => T & { postId: string }, postId: string) {
      const r = await db.pool.query<{ payload: Buffer }>("SELECT payload FROM outbox WHERE subject = $1 ORDER BY seq", [
        subject,
      ]);
      return r.rows.map((x) => decode(x.payload)).filter((m) => m.postId === postId);
    }

    beforeAll(async () => {
      tdb = await createTestDatabase();
      db = await openDatabase({ url: tdb.url, schema: "council", poolSize: 4, log });
      await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
    });
    afterAll(async () => {
      await db?.close();
      await tdb?.drop();
    });
    beforeEach(() => {
      clock = new SetClock(new Date("2026-05-01T12:00:00Z"));
      repo = new CouncilRepository(db.pool, clock, 7 * DAY, () => undefined, DAY);
      actions = new CaseActions(repo);
    });

    it("the decider is the councillor whose ballot started the last call that ran its course; a deadline close has none", async () => {
      const id = post();
      await repo.nominate(id, "ext_author", "ext_c1", 3);
      await repo.castBallot(id, "ext_c2", "approve", "yes"); // decides: the last call starts
      later(DAY);
      await repo.closeDue();
      expect(await repo.get(id)).toMatchObject({ status: "adopted", decidedBy: "ext_c2" });
      const lapsed = post();
      await repo.nominate(lapsed, "ext_author", "ext_c1", 3); // one approval of 3: no decision
      later(8 * DAY);
      await repo.closeDue();
      expect(await repo.get(lapsed)).toMatchObject({ status: "rejected", decidedBy: "" }); // quorum not met at the deadline
    });

    it("only the decider or the chief states a decision, only once decided, with a review date in the future; the date is announced once", async () => {
      const id = post();
      await repo.nominate(id, "ext_author", "ext_c1", 3);
      expect(await code(actions.recordDecision(id, "ext_c1", true, "too early", null))).toBe("invalid_state");
      await repo.castBallot(id, "ext_c2", "approve", "yes");
      later(DAY);
      await repo.closeDue();
      expect(await code(actions.recordDecision(id, "ext_c1", false, "not mine", null))).toBe("forbidden");
      expect(await code(actions.recordDecision(id, "ext_c2", false, "past", new Date(clock.at.getTime() - 1)))).toBe(
        "invalid_request",
      );
      const reviewAt = new Date(clock.at.getTime() + 30 * DAY);
      const stated = await actions.recordDecision(id, "ext_c2", false, "Adopted for its clear need.", reviewAt);
      expect(stated.decision).toMatchObject({
        statement: "Adopted for its clear need.",
        by: "ext_c2",
        reviewAt: reviewAt.toISOString(),
      });
      expect((await actions.recordDecision(id, "ext_chief", true, "Restated.", reviewAt)).decision?.by).toBe(
        "ext_chief",
      );
      const attention = new CouncilAttention(repo);
      expect((await attention.reviewsDue("ext_author", false, 10)).items).toEqual([]);
      later(31 * DAY);
      expect(await repo.announceDueReviews()).toBeGreaterThanOrEqual(1);
      expect(await repo.announceDueReviews()).toBe(0); // once per date
      const due = await published("council.review_due", (b) => events.ReviewDue.decode(b), id);
      expect(due.map((m) => m.reviewAt)).toEqual([reviewAt.toISOString()]);
      expect((await attention.reviewsDue("ext_author", false, 10)).items.map((i) => i.postId)).toEqual([id]);
      expect((await attention.reviewsDue("ext_someone", false, 10)).items).toEqual([]);
      expect((await attention.reviewsDue("ext_someone", true, 10)).items.map((i) => i.postId)).toContain(id);
    });

    it("an adoption supersedes the adopted, implementing or completed proposals it supersedes or replaces; not a rejected one, nor one it requires", async () => {
      const now = new CouncilRepository(db.pool, clock, 7 * DAY, () => undefined, 0); // closes at the deciding ballot
      const nowActions = new CaseActions(now);
      const decide = async (id: string, vote: "approve" | "reject") => {
        await now.nominate(id, "ext_author", "ext_c1", 3);
        await now.castBallot(id, "ext_c2", vote, "decides");
        if (vote === "reject") await now.castBallot(id, "ext_c3", "reject", "decides");
      };
      const [adopted, rejected, required, newer] = [post(), post(), post(), post()];
      await decide(adopted, "approve");
      await decide(rejected, "reject");
      await decide(required, "approve");
      expect((await repo.get(rejected)).status).toBe("rejected");
      await nowActions.setLinks(newer, "ext_author", "open", [
        { type: "supersedes", postId: adopted },
        { type: "replaces", postId: rejected },
        { type: "requires", postId: required },
      ]);
      await decide(newer, "approve");
      expect(await now.get(adopted)).toMatchObject({ status: "superseded", supersededBy: newer });
      expect((await now.get(adopted)).timeline.at(-1)).toMatchObject({ status: "superseded", by: "ext_c2" });
      expect((await now.get(rejected)).status).toBe("rejected");
      expect((await now.get(required)).status).toBe("adopted");
      expect((await now.get(newer)).links.map((l) => `${l.type} ${l.postId}`)).toEqual([
        `replaces ${rejected}`,
        `requires ${required}`,
        `supersedes ${adopted}`,
      ]);
      const sup = await published("council.case_superseded", (b) => events.CaseSuperseded.decode(b), adopted);
      expect(sup.map((m) => m.supersededBy)).toEqual([newer]);
      // decided: the links can no longer change
      expect(await code(nowActions.setLinks(newer, "ext_author", "adopted", []))).toBe("invalid_state");
    });
  },
);
