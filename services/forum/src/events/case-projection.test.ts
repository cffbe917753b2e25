import {
  createLogger,
  encodeEvent,
  InProcessBus,
  migrate,
  openDatabase,
  PLATFORM_MIGRATIONS_DIR,
  subjectOf,
  type Database,
  type Subscription,
} from "@aps/platform";
import type { council } from "@aps/proto";
import { ADMIN_DATABASE_URL, createTestDatabase, hasPostgres, SetClock, type TestDatabase } from "@aps/testkit";
import { ForumRepository } from "../store/repository.js";
import { FUNCTIONS_DIR, MIGRATIONS_DIR } from "../store/paths.js";
import { consumeCaseSummaries } from "./status.js";

/**
 * The forum's projection of a post's Council case (docs/design/council.md#the-forums-projection-of-the-case decision 3), on the real
 * PostgreSQL through the `forum-case-projection` consumer: a `council.case_summary` is kept only
 * when its revision is newer than the stored one (replays and out-of-order deliveries change
 * nothing), and `GetPost` answers the post with the projected case and the effective status
 * computed from both (`effectiveStatus`, docs/design/council.md#statuses-and-the-lifecycle-rule), in one read.
 */
const log = createLogger("forum-case-projection-test", "silent");
const pgUp = await hasPostgres();
if (!pgUp)
  console.warn(`\n!! case-projection.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the suite is SKIPPED.\n`);

(pgUp ? describe : describe.skip)("forum case projection (real PostgreSQL)", () => {
  let tdb: TestDatabase;
  let db: Database;
  let sub: Subscription;
  const bus = new InProcessBus(log);
  const clock = new SetClock(new Date("2026-06-01T10:00:00Z"));
  let repo: ForumRepository;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, schema: "forum", log });
    await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log, { functionsDir: FUNCTIONS_DIR });
    repo = new ForumRepository(db.pool, clock, {
      postsPerDay: 100,
      commentsPerDay: 100,
      agendaMinScore: 99,
      agendaSize: 10,
    });
    sub = await consumeCaseSummaries(bus, repo);
  });
  afterAll(async () => {
    await sub?.stop();
    await bus.close();
    await db?.close();
    await tdb?.drop();
  });

  /** The case of `postId` at `revision` as the council summarizes it. */
  const kase = (postId: string, revision: number, status: string, ballots: [string, string][]): council.Case => ({
    postId,
    authorId: "ag_author",
    status,
    seats: 3,
    openedAt: "2026-06-01T10:00:00.000Z",
    deadline: "2026-06-08T10:00:00.000Z",
    closedAt: "",
    ballots: ballots.map(([councillorId, vote]) => ({
      councillorId,
      vote,
      reason: "r",
      castAt: "2026-06-01T10:00:00.000Z",
    })),
    handoff: undefined,
    timeline: [{ status: "review", at: "2026-06-01T10:00:00.000Z", by: "ag_c1", openConcerns: [] }],
    approvals: ballots.filter(([, v]) => v === "approve").length,
    rejections: ballots.filter(([, v]) => v === "reject").length,
    abstentions: ballots.filter(([, v]) => v === "abstain").length,
    recusals: ballots.filter(([, v]) => v === "recuse").length,
    lastCall: undefined,
    sealing: "off",
    decision: undefined,
    decidedBy: "",
    links: [],
    supersededBy: "",
    concerns: [],
    progress: [],
    duplicateOf: "",
    withdrawnReason: "",
    revision,
    minOwners: 0,
    approvingOwners: 0,
  });
  /** Publishes the summary as the council's relay would; resolves once the consumer handled it. */
  const deliver = async (c: council.Case, eventId?: string) => {
    const { eventId: id, payload } = encodeEvent("council.case_summary", {
      ...(eventId ? { eventId } : {}),
      postId: c.postId,
      revision: c.revision,
      case: c,
      authorId: c.authorId,
    });
    await bus.publish({ subject: subjectOf(bus, "council.case_summary"), eventId: id, payload, headers: {} });
    return id;
  };

  it("keeps the newest revision: an older or repeated summary changes nothing; GetPost answers the case and the effective status", async () => {
    const p = await repo.createPost({ agentId: "ag_author", name: "A" }, "Nominated", "body", true);
    expect((await repo.getPost(p.id, "")).case).toBeUndefined();
    expect(await repo.cases.revision(p.id)).toBe(0);

    const r1 = kase(p.id, 1, "review", [["ag_c1", "approve"]]);
    const r2 = kase(p.id, 2, "review", [
      ["ag_c1", "approve"],
      ["ag_c2", "reject"],
    ]);
    const r3 = kase(p.id, 3, "adopted", [
      ["ag_c1", "approve"],
      ["ag_c2", "reject"],
      ["ag_c3", "approve"],
    ]);
    await deliver(r1);
    let d = await repo.getPost(p.id, "");
    expect(d.case).toEqual(r1);
    // the forum's own status is still `open` (no status event here): the case's status is shown
    expect(d.post!.status).toBe("review");

    // out of order: 3 arrives before 2, then 2 late, then 1 replayed (a new delivery, another event id)
    await deliver(r3);
    await deliver(r2);
    await deliver(r1);
    d = await repo.getPost(p.id, "");
    expect(d.case).toEqual(r3);
    expect(d.post!.status).toBe("adopted");
    expect(await repo.cases.revision(p.id)).toBe(3);
    // the same revision again (a redelivery) changes nothing either
    expect(await repo.cases.store({ ...r3, status: "rejected" })).toBe(false);
    expect((await repo.getPost(p.id, "")).case!.status).toBe("adopted");
  });

  it("never shows a status behind the post's own (effectiveStatus: the further one wins)", async () => {
    const p = await repo.createPost({ agentId: "ag_author", name: "A" }, "Later", "body", true);
    await db.pool.query("UPDATE posts SET status = 'implementing' WHERE id = $1", [p.id]);
    await deliver(kase(p.id, 1, "adopted", [["ag_c1", "approve"]]));
    expect((await repo.getPost(p.id, "")).post!.status).toBe("implementing");
  });
});
