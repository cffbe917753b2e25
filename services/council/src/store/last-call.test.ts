import { fileURLToPath } from "node:url";
import { ApsError, createLogger, migrate, openDatabase, PLATFORM_MIGRATIONS_DIR, type Database } from "@aps/platform";
import { events } from "@aps/proto";
import { createTestDatabase, hasPostgres, SetClock, type TestDatabase } from "@aps/testkit";
import { CaseActions } from "./case-actions.js";
import { CouncilRepository } from "./repository.js";

/**
 * Last call on the real PostgreSQL (docs/reference/council.md "Last call"): an outcome the ballots
 * decide becomes final only when its last call ends; a concern raised in it holds an adoption; a
 * changed ballot re-decides; the deadline does not close a case in its last call. Time moves by an
 * injected clock; `closeDue` is the scheduler's pass. Expected values follow the rules by hand.
 */
const log = createLogger("council-last-call-test", "silent");
const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));
const pgUp = await hasPostgres();
if (!pgUp) console.warn("!! council last-call.test.ts: NO POSTGRESQL — the last-call suite is SKIPPED");

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const DEADLINE_MS = 7 * DAY;

(pgUp ? describe : describe.skip)("last call on the real PostgreSQL (SKIPPED without PostgreSQL)", () => {
  let tdb: TestDatabase;
  let db: Database;
  let clock: SetClock;
  let repo: CouncilRepository;
  let actions: CaseActions;
  let n = 0;
  const post = () => `p_lc${String(++n).padStart(4, "0")}`;

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
    repo = new CouncilRepository(db.pool, clock, DEADLINE_MS, () => undefined, DAY);
    actions = new CaseActions(repo);
  });

  const later = (ms: number) => (clock.at = new Date(clock.at.getTime() + ms));
  /** The last-call events about `postId`, oldest first: [subject, outcome, reason]. */
  async function lastCallEvents(postId: string): Promise<[string, string][]> {
    const r = await db.pool.query<{ subject: string; payload: Buffer }>(
      "SELECT subject, payload FROM outbox WHERE subject LIKE 'council.last_call_%' ORDER BY seq",
    );
    return r.rows.flatMap((row): [string, string][] => {
      if (row.subject === "council.last_call_started") {
        const m = events.LastCallStarted.decode(row.payload);
        return m.postId === postId ? [[`started ${m.endsAt}`, m.outcome]] : [];
      }
      const m = events.LastCallCancelled.decode(row.payload);
      return m.postId === postId ? [[`cancelled ${m.reason}`, m.outcome]] : [];
    });
  }
  const code = async (p: Promise<unknown>) =>
    p.then(
      () => "ok",
      (e: unknown) => (e instanceof ApsError ? e.code : String(e)),
    );

  it("a decisive adoption waits for its last call, then is final", async () => {
    const id = post();
    const opened = clock.at;
    await repo.nominate(id, "ext_author", "ext_c1", 3);
    const decided = await repo.castBallot(id, "ext_c2", "approve", "yes"); // 2 of 3: decisive
    const ends = new Date(opened.getTime() + DAY).toISOString();
    expect(decided).toMatchObject({
      status: "review",
      closedAt: "",
      lastCall: { outcome: "adopted", startedAt: opened.toISOString(), endsAt: ends },
    });
    expect(await lastCallEvents(id)).toEqual([[`started ${ends}`, "adopted"]]);
    later(DAY - 1000);
    await repo.closeDue();
    expect((await repo.get(id)).status).toBe("review"); // a second before the end
    later(1000);
    await repo.closeDue();
    expect(await repo.get(id)).toMatchObject({ status: "adopted", closedAt: ends });
    // the last call stays on the record of the closed case
    expect((await repo.get(id)).lastCall).toMatchObject({ outcome: "adopted", endsAt: ends });
  });

  it("a concern raised in the last call holds the case; resolving it starts a new last call", async () => {
    const id = post();
    await repo.nominate(id, "ext_author", "ext_c1", 3);
    await repo.castBallot(id, "ext_c2", "approve", "yes");
    later(HOUR);
    const held = await actions.raiseConcern(id, "ext_c3", "the rollout plan has no rollback");
    expect(held.lastCall).toBeUndefined();
    expect(held.status).toBe("review");
    // the first last call's end passes: nothing closes while the concern is open
    later(DAY);
    await repo.closeDue();
    expect((await repo.get(id)).status).toBe("review");
    const concernId = held.concerns[0]!.id;
    const resumed = await actions.resolveConcern(id, concernId, "ext_c3", false, "rollback added");
    const ends = new Date(clock.at.getTime() + DAY).toISOString();
    expect(resumed.lastCall).toMatchObject({ outcome: "adopted", endsAt: ends });
    expect((await lastCallEvents(id)).map(([what, outcome]) => `${what.split(" ")[0]} ${outcome}`)).toEqual([
      "started adopted",
      "cancelled adopted",
      "started adopted",
    ]);
    expect((await lastCallEvents(id))[1]![0]).toBe("cancelled concern_raised");
    later(DAY);
    await repo.closeDue();
    expect((await repo.get(id)).status).toBe("adopted");
  });

  it("a changed ballot re-decides: the last call is cancelled when the outcome no longer holds", async () => {
    const id = post();
    await repo.nominate(id, "ext_author", "ext_c1", 3);
    await repo.castBallot(id, "ext_c2", "approve", "yes");
    const changed = await repo.castBallot(id, "ext_c2", "reject", "on reflection, no"); // 1–1 of 3: open
    expect(changed.lastCall).toBeUndefined();
    expect(await lastCallEvents(id)).toEqual([
      [expect.stringMatching(/^started /), "adopted"],
      ["cancelled ballots_changed", "adopted"],
    ]);
    // the third seat rejects: a rejection is decided, and passes its last call too
    const rejected = await repo.castBallot(id, "ext_c3", "reject", "no");
    expect(rejected).toMatchObject({ status: "review", lastCall: { outcome: "rejected" } });
    later(DAY);
    await repo.closeDue();
    expect((await repo.get(id)).status).toBe("rejected");
    expect(await code(repo.castBallot(id, "ext_c1", "approve", "too late"))).toBe("invalid_state");
  });

  it("the deadline does not close a case in its last call; the last call decides it", async () => {
    const id = post();
    await repo.nominate(id, "ext_author", "ext_c1", 3);
    later(DEADLINE_MS - HOUR);
    await repo.castBallot(id, "ext_c2", "approve", "yes"); // decided an hour before the deadline
    later(2 * HOUR); // past the deadline, inside the last call
    await repo.closeDue();
    expect((await repo.get(id)).status).toBe("review");
    later(DAY);
    await repo.closeDue();
    expect((await repo.get(id)).status).toBe("adopted");
  });

  it("a withdrawal during the last call closes the case as withdrawn, without the last call on its record", async () => {
    const id = post();
    await repo.nominate(id, "ext_author", "ext_c1", 3);
    expect((await repo.castBallot(id, "ext_c2", "approve", "yes")).lastCall).toMatchObject({ outcome: "adopted" });
    const withdrawn = await repo.withdraw(id, "ext_author", "Superseded by a better plan.");
    expect(withdrawn).toMatchObject({ status: "withdrawn" });
    expect(withdrawn.lastCall).toBeUndefined();
    later(DAY);
    await repo.closeDue();
    expect((await repo.get(id)).status).toBe("withdrawn"); // the ended last call closes nothing
  });

  it("with LAST_CALL_MS 0 the deciding ballot closes the case at once", async () => {
    const id = post();
    const now = new CouncilRepository(db.pool, clock, DEADLINE_MS, () => undefined, 0);
    await now.nominate(id, "ext_author", "ext_c1", 3);
    expect((await now.castBallot(id, "ext_c2", "approve", "yes")).status).toBe("adopted");
    expect(await lastCallEvents(id)).toEqual([]);
  });
  /** The `council.case_closed` event of `postId`: its closedAt and decidedAt. */
  async function closedEvent(postId: string): Promise<{ closedAt: string; decidedAt: string } | undefined> {
    const r = await db.pool.query<{ payload: Buffer }>(
      "SELECT payload FROM outbox WHERE subject = 'council.case_closed' ORDER BY seq",
    );
    const m = r.rows.map((row) => events.CaseClosed.decode(row.payload)).find((x) => x.postId === postId);
    return m && { closedAt: m.closedAt, decidedAt: m.decidedAt };
  }

  it("the close of a last call carries decidedAt, the instant the outcome was announced (Sagacity counts votes as of then)", async () => {
    const id = post();
    await repo.nominate(id, "ext_author", "ext_c1", 3);
    const announced = clock.at.toISOString();
    await repo.castBallot(id, "ext_c2", "approve", "yes");
    later(DAY);
    await repo.closeDue();
    expect(await closedEvent(id)).toEqual({ closedAt: clock.at.toISOString(), decidedAt: announced });
    // without a last call (LAST_CALL_MS 0) the outcome is announced by the close itself
    const other = post();
    const now = new CouncilRepository(db.pool, clock, DEADLINE_MS, () => undefined, 0);
    await now.nominate(other, "ext_author", "ext_c1", 3);
    await now.castBallot(other, "ext_c2", "approve", "yes");
    expect(await closedEvent(other)).toEqual({ closedAt: clock.at.toISOString(), decidedAt: clock.at.toISOString() });
  });

  it('a case keeps the sealing it opened with, and its ballot events carry it (docs/reference/council.md "Sealed ballots")', async () => {
    const sealed = new CouncilRepository(db.pool, clock, DEADLINE_MS, () => undefined, DAY, "until_vote");
    const a = post();
    await sealed.nominate(a, "ext_author", "ext_c1", 3);
    const b = post();
    await repo.nominate(b, "ext_author", "ext_c1", 3); // a repository without the setting: positions public
    // a ballot through another repository (another setting) does not change a case's sealing
    expect((await repo.castBallot(a, "ext_c2", "reject", "no")).sealing).toBe("until_vote");
    expect((await sealed.castBallot(b, "ext_c2", "reject", "no")).sealing).toBe("off");
    const r = await db.pool.query<{ payload: Buffer }>(
      "SELECT payload FROM outbox WHERE subject = 'council.ballot_cast' ORDER BY seq",
    );
    const cast = r.rows
      .map((row) => events.BallotCast.decode(row.payload))
      .filter((m) => m.postId === a || m.postId === b);
    expect(cast.map((m) => `${m.postId === a ? "a" : "b"} ${m.councillorId} ${m.sealing}`)).toEqual([
      "a ext_c1 until_vote",
      "b ext_c1 off",
      "a ext_c2 until_vote",
      "b ext_c2 off",
    ]);
  });
});
