import { fileURLToPath } from "node:url";
import { createLogger, migrate, openDatabase, PLATFORM_MIGRATIONS_DIR, type Database } from "@aps/platform";
import { createTestDatabase, hasPostgres, SetClock, type TestDatabase } from "@aps/testkit";
import { CouncilRepository } from "./repository.js";

/**
 * Operator-diverse adoption on the real PostgreSQL (docs/design/council.md#operator-diverse-adoption):
 * with COUNCIL_MIN_OWNERS k, an approval majority adopts only once its approve ballots come from k
 * distinct verified owner domains, each ballot's owner taken at ballot time; an unverified
 * councillor ("") is no owner; a case keeps the k it opened with; k 0 is the rule without owners.
 * No last call here (LAST_CALL_MS 0: a decisive outcome closes the case at once). Expected values
 * follow the rules by hand.
 */
const log = createLogger("council-min-owners-test", "silent");
const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));
const pgUp = await hasPostgres();
if (!pgUp) console.warn("!! council min-owners.test.ts: NO POSTGRESQL — the min-owners suite is SKIPPED");

const DAY = 86_400_000;
const DEADLINE_MS = 7 * DAY;

(pgUp ? describe : describe.skip)(
  "operator-diverse adoption on the real PostgreSQL (SKIPPED without PostgreSQL)",
  () => {
    let tdb: TestDatabase;
    let db: Database;
    let clock: SetClock;
    let n = 0;
    const post = () => `p_mo${String(++n).padStart(4, "0")}`;
    /** A repository whose new cases open with k = `minOwners`, no last call, positions public. */
    const repoWith = (minOwners: number) =>
      new CouncilRepository(db.pool, clock, DEADLINE_MS, () => undefined, 0, "off", minOwners);

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
      clock = new SetClock(new Date("2026-04-01T12:00:00Z"));
    });

    const approve = (repo: CouncilRepository, id: string, who: string, domain: string) =>
      repo.castBallot(id, who, "approve", "yes", async () => 5, undefined, domain);

    it("k=2: three approvals of one verified domain do not adopt; an approval from a second domain does", async () => {
      const repo = repoWith(2);
      const id = post();
      // 5 seats: the nomination and two more approvals of one operator are a majority of 3 (decisive without k)
      let c = await repo.nominate(id, "ext_author", "ext_a1", 5, undefined, false, "alpha.example");
      expect(c).toMatchObject({ minOwners: 2, approvingOwners: 1 });
      await approve(repo, id, "ext_a2", "alpha.example");
      c = await approve(repo, id, "ext_a3", "alpha.example");
      expect(c).toMatchObject({ status: "review", approvals: 3, approvingOwners: 1, minOwners: 2, closedAt: "" });
      // a scheduler pass before the deadline changes nothing
      expect(await repo.closeDue()).toBe(0);
      c = await approve(repo, id, "ext_b1", "beta.example");
      expect(c).toMatchObject({ status: "adopted", approvals: 4, approvingOwners: 2, decidedBy: "ext_b1" });
    });

    it("an unverified councillor counts as no owner, and re-casting re-reads the owner", async () => {
      const repo = repoWith(2);
      const id = post();
      await repo.nominate(id, "ext_author", "ext_a1", 5, undefined, false, "alpha.example");
      await approve(repo, id, "ext_u1", "");
      let c = await approve(repo, id, "ext_u2", "");
      expect(c).toMatchObject({ status: "review", approvals: 3, approvingOwners: 1 });
      // the same councillor, verified since, ballots again: its ballot now counts for its owner
      c = await approve(repo, id, "ext_u2", "gamma.example");
      expect(c).toMatchObject({ status: "adopted", approvals: 3, approvingOwners: 2 });
    });

    it("at the deadline an approval majority short of k owners closes as rejected", async () => {
      const repo = repoWith(2);
      const id = post();
      await repo.nominate(id, "ext_author", "ext_a1", 5, undefined, false, "alpha.example");
      await approve(repo, id, "ext_a2", "alpha.example");
      await approve(repo, id, "ext_a3", "alpha.example");
      clock.at = new Date(clock.at.getTime() + DEADLINE_MS + 1000);
      expect(await repo.closeDue()).toBe(1);
      expect(await repo.get(id)).toMatchObject({ status: "rejected", approvals: 3, approvingOwners: 1 });
    });

    it("once no remaining seat can bring the k-th owner, the case is decided: rejected", async () => {
      const repo = repoWith(2);
      const id = post();
      await repo.nominate(id, "ext_author", "ext_a1", 3, undefined, false, "alpha.example");
      // 3 seats, both of the others of one operator: after the second, no seat is left for a second owner
      let c = await repo.castBallot(id, "ext_a2", "approve", "yes", async () => 3, undefined, "alpha.example");
      expect(c.status).toBe("review"); // one seat left: it may still bring a second owner
      c = await repo.castBallot(id, "ext_a3", "approve", "yes", async () => 3, undefined, "alpha.example");
      expect(c).toMatchObject({ status: "rejected", approvals: 3, approvingOwners: 1 });
    });

    it("k=0 keeps today's rule, and a case keeps the k it opened with", async () => {
      const off = repoWith(0);
      const id = post();
      await off.nominate(id, "ext_author", "ext_a1", 5, undefined, false, "alpha.example");
      await approve(off, id, "ext_a2", "alpha.example");
      const c = await approve(off, id, "ext_a3", "");
      expect(c).toMatchObject({ status: "adopted", minOwners: 0, approvingOwners: 1 });
      // opened with k=0, balloted through a repository now configured with k=2: the case's own k decides
      const old = post();
      await off.nominate(old, "ext_author", "ext_a1", 5, undefined, false, "alpha.example");
      const now2 = repoWith(2);
      await approve(now2, old, "ext_a2", "alpha.example");
      expect(await approve(now2, old, "ext_a3", "alpha.example")).toMatchObject({ status: "adopted", minOwners: 0 });
    });

    it("in a last call, a changed ballot that loses an owner cancels the adoption it announced", async () => {
      const repo = new CouncilRepository(db.pool, clock, DEADLINE_MS, () => undefined, DAY, "off", 2);
      const id = post();
      await repo.nominate(id, "ext_author", "ext_a1", 5, undefined, false, "alpha.example");
      await approve(repo, id, "ext_b1", "beta.example");
      let c = await approve(repo, id, "ext_a2", "alpha.example");
      expect(c).toMatchObject({ status: "review", approvingOwners: 2, lastCall: { outcome: "adopted" } });
      // beta's councillor abstains instead: 2 approvals of one owner, the last call is cancelled
      c = await repo.castBallot(id, "ext_b1", "abstain", "on reflection", async () => 5, undefined, "beta.example");
      expect(c).toMatchObject({ status: "review", approvingOwners: 1, lastCall: undefined });
    });
  },
);
