import {
  createLogger,
  encodeEvent,
  InProcessBus,
  migrate,
  openDatabase,
  PLATFORM_MIGRATIONS_DIR,
  subjectOf,
  type Database,
  type EventFields,
  type EventType,
  type Subscription,
} from "@aps/platform";
import { ADMIN_DATABASE_URL, createTestDatabase, hasPostgres, SetClock, type TestDatabase } from "@aps/testkit";
import { ForumRepository } from "../store/repository.js";
import { FUNCTIONS_DIR, MIGRATIONS_DIR } from "../store/paths.js";
import { consumeCouncilEvents } from "./status.js";

/**
 * The forum's status projection of council events (docs/design/events.md#path-of-an-event), on the real
 * PostgreSQL: the council's decisions reach the post; the `agenda` case the council opens from the
 * forum's own `forum.post_on_agenda` is not projected back into the forum (docs/design/events.md#outbox): no
 * transaction, no processed-event row, the status the vote wrote stays.
 */
const log = createLogger("forum-consumers-test", "silent");
const pgUp = await hasPostgres();
if (!pgUp) console.warn(`\n!! status.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the suite is SKIPPED.\n`);

(pgUp ? describe : describe.skip)("forum status projection (real PostgreSQL)", () => {
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
      agendaMinScore: 1,
      agendaSize: 10,
    });
    sub = await consumeCouncilEvents(bus, db.pool, repo);
  });
  afterAll(async () => {
    await sub?.stop();
    await bus.close();
    await db?.close();
    await tdb?.drop();
  });

  /** Publishes `type` as the council would and resolves once the forum's consumer handled it. */
  const deliver = async <T extends EventType>(type: T, fields: EventFields<T>) => {
    const { eventId, payload } = encodeEvent(type, fields);
    await bus.publish({ subject: subjectOf(bus, type), eventId, payload, headers: {} });
    return eventId;
  };
  const statusOf = async (id: string) =>
    (await db.pool.query<{ status: string }>("SELECT status FROM posts WHERE id = $1", [id])).rows[0]!.status;
  const handled = async (eventId: string) =>
    (await db.pool.query("SELECT 1 FROM processed_events WHERE consumer = 'forum-status' AND event_id = $1", [eventId]))
      .rowCount;

  const opened = (postId: string, status: string) => ({
    postId,
    authorId: "ag_author",
    status,
    seats: 3,
    deadline: "2026-06-08T10:00:00.000Z",
    openedBy: status === "agenda" ? "system" : "ag_councillor",
  });

  it("projects the council's decisions: a nomination's review case, then the outcome", async () => {
    const p = await repo.createPost({ agentId: "ag_author", name: "A" }, "Nominated", "body", true);
    const id = await deliver("council.case_opened", opened(p.id, "review"));
    expect(await statusOf(p.id)).toBe("review");
    expect(await handled(id)).toBe(1);
    await deliver("council.case_closed", {
      postId: p.id,
      authorId: "ag_author",
      outcome: "adopted",
      closedAt: clock.at.toISOString(),
      decidedAt: clock.at.toISOString(),
      approvals: 2,
      rejections: 0,
      abstentions: 0,
      recusals: 0,
      seats: 3,
      openConcerns: [],
      reason: "",
      by: "ag_councillor",
    });
    expect(await statusOf(p.id)).toBe("adopted");
  });

  it("does not take back the agenda status it published: the council's agenda case_opened changes nothing and costs no transaction", async () => {
    const p = await repo.createPost({ agentId: "ag_author", name: "A" }, "Hot", "body", true);
    await repo.castVote(p.id, "ag_voter", 1); // AGENDA_MIN_SCORE 1: the heat rule moves it in the vote
    expect(await statusOf(p.id)).toBe("agenda");
    const echo = await deliver("council.case_opened", opened(p.id, "agenda"));
    expect(await handled(echo)).toBe(0);
    expect(await statusOf(p.id)).toBe("agenda");
    // and an `agenda` case_opened about a post the forum holds elsewhere is not a decision to take
    const other = await repo.createPost({ agentId: "ag_author", name: "A" }, "Cold", "body", true);
    await deliver("council.case_opened", opened(other.id, "agenda"));
    expect(await statusOf(other.id)).toBe("open");
  });
});
