import { fileURLToPath } from "node:url";
import { ApsError, createLogger, migrate, openDatabase, PLATFORM_MIGRATIONS_DIR, type Database } from "@aps/platform";
import { council, events } from "@aps/proto";
import { createTestDatabase, hasPostgres, SetClock, type TestDatabase } from "@aps/testkit";
import { CouncilRepository } from "./repository.js";

/**
 * The council's repository on the real PostgreSQL (docs/design/council.md#statuses-and-the-lifecycle-rule "Lifecycle"): a
 * nomination opens a `review` case with the nominator's approve ballot; ballots close a case as
 * soon as the outcome is decided (adopted: approvals a strict majority of the seats; rejected: a
 * majority out of reach); the deadline pass applies the quorum rule (ballots ≥ ⌈seats/2⌉ and
 * approvals a strict majority of them); hand-off and completion follow `adopted` → `implementing`
 * → `completed` only; every transition writes exactly its event to the outbox; racing ballots
 * close a case once. Expected values come from those rules, worked out by hand per case.
 */
const log = createLogger("council-repository-test", "silent");
const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));
const pgUp = await hasPostgres();
if (!pgUp) console.warn("!! council repository.test.ts: NO POSTGRESQL — the council repository suite is SKIPPED");

const DEADLINE_MS = 7 * 86_400_000;

(pgUp ? describe : describe.skip)("council repository on the real PostgreSQL (SKIPPED without PostgreSQL)", () => {
  let tdb: TestDatabase;
  let db: Database;
  let clock: SetClock;
  let repo: CouncilRepository;
  let wakes = 0;
  let n = 0;
  const post = () => `p_${String(++n).padStart(4, "0")}`;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, schema: "council", poolSize: 8, log });
    await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });
  beforeEach(() => {
    clock = new SetClock(new Date("2026-03-01T12:00:00Z"));
    repo = new CouncilRepository(db.pool, clock, DEADLINE_MS, () => wakes++);
  });

  /** The outbox rows about `postId`, oldest first: [subject, decoded payload]; the case summaries only with `summaries`. */
  async function outbox(postId: string, summaries = false): Promise<[string, Record<string, unknown>][]> {
    const r = await db.pool.query<{ subject: string; payload: Buffer }>(
      "SELECT subject, payload FROM outbox WHERE $1 OR subject <> 'council.case_summary' ORDER BY seq",
      [summaries],
    );
    const decoders: Record<string, (b: Buffer) => Record<string, unknown> & { postId: string }> = {
      "council.case_opened": (b) => events.CaseOpened.decode(b) as never,
      "council.ballot_cast": (b) => events.BallotCast.decode(b) as never,
      "council.case_closed": (b) => events.CaseClosed.decode(b) as never,
      "council.handoff_recorded": (b) => events.HandoffRecorded.decode(b) as never,
      "council.implementation_completed": (b) => events.ImplementationCompleted.decode(b) as never,
      "council.case_summary": (b) => events.CaseSummary.decode(b) as never,
    };
    return r.rows
      .map((row) => [row.subject, decoders[row.subject]!(row.payload)] as [string, Record<string, unknown>])
      .filter(([, m]) => m.postId === postId);
  }

  const code = async (p: Promise<unknown>) =>
    p.then(
      () => "ok",
      (e: unknown) => (e instanceof ApsError ? e.code : String(e)),
    );

  it("hasCase answers whether a post has a case, without reading it", async () => {
    const id = post();
    expect(await repo.hasCase(id)).toBe(false);
    await repo.nominate(id, "ext_author", "ext_c1", 5);
    expect(await repo.hasCase(id)).toBe(true);
    expect(await repo.hasCase(post())).toBe(false);
  });

  it("nomination opens a review case with the nominator's approve ballot; a second one changes nothing", async () => {
    const id = post();
    const before = wakes;
    const c = await repo.nominate(id, "ext_author", "ext_c1", 5);
    expect(c).toMatchObject({
      postId: id,
      authorId: "ext_author",
      status: "review",
      seats: 5,
      approvals: 1,
      rejections: 0,
    });
    expect(c.ballots.map((b) => [b.councillorId, b.vote])).toEqual([["ext_c1", "approve"]]);
    expect(c.deadline).toBe(new Date(clock.at.getTime() + DEADLINE_MS).toISOString());
    expect((await outbox(id)).map(([s]) => s)).toEqual(["council.case_opened", "council.ballot_cast"]);
    expect(wakes).toBe(before + 1); // one commit, one wake of the relay
    expect(await code(repo.nominate(id, "ext_author", "ext_c2", 5))).toBe("invalid_state");
    expect((await outbox(id)).length).toBe(2);
    expect((await repo.get(id)).ballots.length).toBe(1);
  });

  it("adopts once approvals are a strict majority of the seats (3 of 5), and then takes no ballot", async () => {
    const id = post();
    await repo.nominate(id, "ext_author", "ext_c1", 5);
    expect((await repo.castBallot(id, "ext_c2", "approve", "yes")).status).toBe("review"); // 2 of 5
    const c = await repo.castBallot(id, "ext_c3", "approve", "yes"); // 3 of 5: 6 > 5
    expect(c).toMatchObject({ status: "adopted", approvals: 3, rejections: 0, closedAt: clock.at.toISOString() });
    const closed = (await outbox(id)).filter(([s]) => s === "council.case_closed");
    expect(closed.map(([, m]) => [m.outcome, m.approvals, m.rejections, m.seats])).toEqual([["adopted", 3, 0, 5]]);
    expect(await code(repo.castBallot(id, "ext_c4", "reject", "late"))).toBe("invalid_state");
  });

  it("rejects as soon as a majority is out of reach (2 rejections of 3 seats), counting a changed ballot once", async () => {
    const id = post();
    await repo.nominate(id, "ext_author", "ext_c1", 3);
    // the nominator changes their mind: still one ballot, now a rejection; approvals 0 + 2 seats
    // left → 2·2 = 4 > 3: a majority is still reachable, the case stays open
    const changed = await repo.castBallot(id, "ext_c1", "reject", "on reflection");
    expect(changed).toMatchObject({ status: "review", approvals: 0, rejections: 1 });
    expect(changed.ballots.map((b) => [b.councillorId, b.vote, b.reason])).toEqual([
      ["ext_c1", "reject", "on reflection"],
    ]);
    // second rejection: approvals 0 + remaining 1 → 2 ≤ 3: rejected
    const c = await repo.castBallot(id, "ext_c2", "reject", "no");
    expect(c).toMatchObject({ status: "rejected", approvals: 0, rejections: 2 });
  });

  it("at the deadline applies the quorum rule, once per case", async () => {
    // opened two months before the other tests' cases, so only these three are due at first
    clock.at = new Date("2026-01-01T12:00:00Z");
    const noQuorum = post(); // 4 seats, 1 ballot < ⌈4/2⌉ = 2 → rejected
    const quorum = post(); // 4 seats, 2 approvals of 2 ballots (quorum 2, strict majority) → adopted
    const tie = post(); // 4 seats, 1 approve + 1 reject: quorum met, no strict majority → rejected
    await repo.nominate(noQuorum, "ext_a", "ext_c1", 4);
    await repo.nominate(quorum, "ext_a", "ext_c1", 4);
    await repo.castBallot(quorum, "ext_c2", "approve", "ok");
    await repo.nominate(tie, "ext_a", "ext_c1", 4);
    await repo.castBallot(tie, "ext_c2", "reject", "no");
    expect((await repo.get(quorum)).status).toBe("review"); // 2 of 4 is no strict majority of the seats
    clock.at = new Date(clock.at.getTime() + DEADLINE_MS - 1);
    expect(await repo.closeDue()).toBe(0);
    clock.at = new Date(clock.at.getTime() + 1);
    expect(await repo.closeDue()).toBe(3);
    expect(await repo.closeDue()).toBe(0);
    expect([(await repo.get(noQuorum)).status, (await repo.get(quorum)).status, (await repo.get(tie)).status]).toEqual([
      "rejected",
      "adopted",
      "rejected",
    ]);
    for (const id of [noQuorum, quorum, tie])
      expect((await outbox(id)).filter(([s]) => s === "council.case_closed").length).toBe(1);
  });

  it("hand-off needs `adopted`, completion needs `implementing`; the timeline records every step", async () => {
    const id = post();
    expect(await code(repo.recordHandoff(id, "ext_chief", "task", "team-x"))).toBe("invalid_state"); // no case
    await repo.nominate(id, "ext_author", "ext_c1", 1); // 1 of 1: adopted at once
    expect(await code(repo.complete(id, "ext_chief"))).toBe("invalid_state");
    const h = await repo.recordHandoff(id, "ext_chief", "task", "team-x");
    expect(h).toMatchObject({
      status: "implementing",
      handoff: { implementation: "task", executor: "team-x", by: "ext_chief" },
    });
    expect(await code(repo.recordHandoff(id, "ext_chief", "self", ""))).toBe("invalid_state");
    const done = await repo.complete(id, "ext_chief");
    expect(done.status).toBe("completed");
    expect(done.timeline.map((t) => [t.status, t.by])).toEqual([
      ["review", "ext_c1"],
      ["adopted", "ext_c1"],
      ["implementing", "ext_chief"],
      ["completed", "ext_chief"],
    ]);
    expect((await outbox(id)).map(([s]) => s)).toEqual([
      "council.case_opened",
      "council.ballot_cast",
      "council.case_closed",
      "council.handoff_recorded",
      "council.implementation_completed",
    ]);
  });

  it("keyed writes (Idempotency-Key, docs/design/edge.md#idempotency-key): a retried hand-off returns the first case, not a 409, and records one step", async () => {
    const id = post();
    const scope = (key: string, operation: string) => ({
      agentId: "ext_chief",
      key,
      operation,
      request: { postId: id },
    });
    await repo.nominate(id, "ext_author", "ext_c1", 1, scope("nominate-1", "council.Nominate"));
    const again = await repo.nominate(id, "ext_author", "ext_c1", 1, scope("nominate-1", "council.Nominate"));
    expect(again.status).toBe("adopted");
    const h = await repo.recordHandoff(id, "ext_chief", "task", "team-x", scope("handoff-1", "council.RecordHandoff"));
    await repo.complete(id, "ext_chief");
    // after completion, the retry of the hand-off answers what the hand-off answered
    const retry = await repo.recordHandoff(
      id,
      "ext_chief",
      "task",
      "team-x",
      scope("handoff-1", "council.RecordHandoff"),
    );
    expect(retry).toEqual(h);
    expect(retry.status).toBe("implementing");
    expect(await repo.idempotent.replay(scope("handoff-1", "council.RecordHandoff"), council.Case)).toEqual(h);
    expect((await outbox(id)).map(([s]) => s)).toEqual([
      "council.case_opened",
      "council.ballot_cast",
      "council.case_closed",
      "council.handoff_recorded",
      "council.implementation_completed",
    ]);
  });

  it("an agenda case is opened once per event and once per post; with no seat it takes its electorate at the first ballot", async () => {
    const id = post();
    await repo.openFromAgenda("evt_1", id, "ext_author", 0);
    await repo.openFromAgenda("evt_1", id, "ext_author", 0); // the same event again
    await repo.openFromAgenda("evt_2", id, "ext_author", 0); // another event for the same post
    expect((await outbox(id)).map(([s]) => s)).toEqual(["council.case_opened"]);
    expect(await repo.get(id)).toMatchObject({ status: "agenda", seats: 0 });
    // first ballot: 3 councillors are seated now → seats 3; 1 approval of 3 keeps it open
    const c = await repo.castBallot(id, "ext_c1", "approve", "yes", async () => 3);
    expect(c).toMatchObject({ status: "agenda", seats: 3, approvals: 1 });
  });

  it("two ballots racing for the deciding vote close the case exactly once", async () => {
    for (let round = 0; round < 5; round++) {
      const id = post();
      await repo.nominate(id, "ext_author", "ext_c1", 3); // 1 of 3; either next approval decides
      const results = await Promise.all([
        code(repo.castBallot(id, "ext_c2", "approve", "a")),
        code(repo.castBallot(id, "ext_c3", "approve", "b")),
      ]);
      // the second to lock the case finds it adopted already
      expect(results.sort()).toEqual(["invalid_state", "ok"]);
      expect((await outbox(id)).filter(([s]) => s === "council.case_closed").length).toBe(1);
      expect(await repo.get(id)).toMatchObject({ status: "adopted", approvals: 2 });
    }
  });

  it("every change publishes the case summary in its transaction, the revision one higher each time (docs/design/council.md#the-forums-projection-of-the-case)", async () => {
    const id = post();
    const steps = [
      await repo.nominate(id, "ext_author", "ext_c1", 3), // open + ballot: one change, one summary
      await repo.castBallot(id, "ext_c2", "reject", "no"),
      await repo.castBallot(id, "ext_c3", "approve", "yes"), // adopts: still one summary
      await repo.recordHandoff(id, "ext_chief", "task", "team-x"),
      await repo.complete(id, "ext_chief"),
    ];
    expect(steps.map((c) => c.revision)).toEqual([1, 2, 3, 4, 5]);
    const summaries = (await outbox(id, true)).filter(([s]) => s === "council.case_summary").map(([, m]) => m);
    expect(summaries.map((m) => m.revision)).toEqual([1, 2, 3, 4, 5]);
    // each summary is the case as the write answered it (status, ballots with councillor ids, hand-off…)
    summaries.forEach((m, i) => expect(m.case).toEqual(steps[i]));
    expect((summaries[2]!.case as council.Case).ballots.map((b) => b.councillorId)).toEqual([
      "ext_c1",
      "ext_c2",
      "ext_c3",
    ]);
    // a refused write changes nothing and publishes nothing
    expect(await code(repo.castBallot(id, "ext_c4", "reject", "late"))).toBe("invalid_state");
    expect((await repo.get(id)).revision).toBe(5);
    expect((await outbox(id, true)).filter(([s]) => s === "council.case_summary").length).toBe(5);
  });

  it("the upgrade's backfill summarizes each case from before revisions once (docs/design/council.md#the-forums-projection-of-the-case)", async () => {
    const [a, b] = [post(), post()];
    await repo.nominate(a, "ext_author", "ext_c1", 9);
    await repo.nominate(b, "ext_author", "ext_c1", 9);
    // as the migration leaves a case written by the release before: revision 0, never summarized
    await db.pool.query("UPDATE cases SET revision = 0 WHERE post_id = ANY($1::text[])", [[a, b]]);
    expect(await repo.summarizeUnsummarized(1)).toBeGreaterThanOrEqual(2); // batches of 1
    expect((await repo.get(a)).revision).toBe(1);
    expect((await repo.get(b)).revision).toBe(1);
    expect(await repo.summarizeUnsummarized()).toBe(0); // done: nothing again
    const last = (await outbox(a, true)).filter(([s]) => s === "council.case_summary").at(-1)![1];
    expect(last).toMatchObject({ revision: 1, postId: a });
  });

  it("positions (docs/reference/council.md): an abstention counts toward the quorum, not the majority; a recusal leaves the electorate", async () => {
    const id = post();
    // 5 seats: nominator approves, one abstains, one recuses → 4 eligible, quorum 2
    await repo.nominate(id, "ext_author", "ext_c1", 5);
    let c = await repo.castBallot(id, "ext_c2", "abstain", "no view on caching layers");
    expect(c).toMatchObject({ status: "review", approvals: 1, abstentions: 1, recusals: 0 });
    c = await repo.castBallot(id, "ext_c3", "recuse", "I maintain the competing design");
    expect(c).toMatchObject({ status: "review", approvals: 1, abstentions: 1, recusals: 1 });
    // at the deadline: the approval and the abstention make the quorum of 2 (the approval alone
    // would not), and 1 approval > 0 rejections: adopted, the tally on the event
    clock.at = new Date(clock.at.getTime() + DEADLINE_MS);
    expect(await repo.closeDue()).toBeGreaterThanOrEqual(1);
    expect(await repo.get(id)).toMatchObject({ status: "adopted", approvals: 1, abstentions: 1, recusals: 1 });
    const closed = (await outbox(id)).find(([s]) => s === "council.case_closed")![1];
    expect(closed).toMatchObject({ outcome: "adopted", approvals: 1, rejections: 0, abstentions: 1, recusals: 1 });
    const ballots = (await outbox(id)).filter(([s]) => s === "council.ballot_cast").map(([, m]) => m.vote);
    expect(ballots).toEqual(["approve", "abstain", "recuse"]);
  });

  it("a seated author is recused from its case at the opening and cannot ballot on it", async () => {
    const id = post();
    // 3 seats, the author among them: 2 eligible; the author holds a recuse ballot from the start
    const opened = await repo.nominate(id, "ext_writer", "ext_c1", 3, undefined, true);
    expect(opened).toMatchObject({ status: "review", recusals: 1, approvals: 1 });
    expect(opened.ballots.map((b) => [b.councillorId, b.vote])).toEqual(
      expect.arrayContaining([
        ["ext_writer", "recuse"],
        ["ext_c1", "approve"],
      ]),
    );
    for (const vote of ["approve", "reject", "abstain"] as const)
      expect(await code(repo.castBallot(id, "ext_writer", vote, "my own proposal"))).toBe("forbidden");
    expect((await repo.get(id)).revision).toBe(opened.revision); // the refused ballots changed nothing
    // one more approval is a majority of the 2 eligible seats (not of 3): adopted
    expect((await repo.castBallot(id, "ext_c2", "approve", "yes")).status).toBe("adopted");
  });

  it("an author who is not seated is not recused: the electorate is every seat", async () => {
    const id = post();
    const c = await repo.nominate(id, "ext_outsider", "ext_c1", 3);
    expect(c).toMatchObject({ recusals: 0 });
    expect(await code(repo.castBallot(id, "ext_outsider", "approve", "mine"))).toBe("forbidden");
  });

  it("lists cases by status, oldest first, in keyset pages", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock.at = new Date(Date.UTC(2026, 5, 1, 0, 0, i));
      const id = post();
      ids.push(id);
      await repo.nominate(id, "ext_author", "ext_c1", 9);
    }
    const seen: string[] = [];
    let cursor = "";
    for (let page = 0; page < 10; page++) {
      const r = await repo.list(["review"], 2, cursor);
      seen.push(...r.items.map((c) => c.postId));
      if (!r.nextCursor) break;
      cursor = r.nextCursor;
    }
    expect(seen.filter((id) => ids.includes(id))).toEqual(ids);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("lists closed cases newest closed first, in keyset pages; open ones are left out (the decisions feed, docs/design/agents.md#atom-feeds)", async () => {
    // opened in one order, closed in the reverse one, years after every other test's cases
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock.at = new Date(Date.UTC(2031, 0, 1, 0, 0, i));
      const id = post();
      ids.push(id);
      await repo.nominate(id, "ext_author", "ext_c1", 3);
    }
    const stillOpen = post();
    await repo.nominate(stillOpen, "ext_author", "ext_c1", 3);
    for (let i = 4; i >= 0; i--) {
      clock.at = new Date(Date.UTC(2031, 0, 2, 0, 0, 10 - i));
      expect((await repo.castBallot(ids[i]!, "ext_c2", "approve", "yes")).status).toBe("adopted");
    }
    const seen: string[] = [];
    let cursor = "";
    for (let page = 0; page < 10; page++) {
      const r = await repo.listRecentlyClosed(["adopted", "rejected"], 2, cursor);
      seen.push(...r.items.map((c) => c.postId));
      if (!r.nextCursor) break;
      cursor = r.nextCursor;
    }
    // the last closed (ids[0]) first; every other test's cases closed before 2031, so they follow
    expect(seen.slice(0, 5)).toEqual(ids);
    expect(seen).not.toContain(stillOpen);
    expect(new Set(seen).size).toBe(seen.length);
  });
});
