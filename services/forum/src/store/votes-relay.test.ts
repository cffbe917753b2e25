import {
  createLogger,
  InProcessBus,
  JetStreamBus,
  migrate,
  openDatabase,
  OutboxRelay,
  PLATFORM_MIGRATIONS_DIR,
  systemClock,
  type Database,
  type EventBus,
} from "@aps/platform";
import { events, forum } from "@aps/proto";
import {
  createTestDatabase,
  eventually,
  hasNats,
  hasPostgres,
  seededRandom,
  TEST_NATS_URL,
  uniqueBusNames,
} from "@aps/testkit";
import { ForumRepository } from "./repository.js";
import { FUNCTIONS_DIR, MIGRATIONS_DIR } from "./paths.js";

/**
 * Votes → outbox → relay (pipelined batches, docs/design/events.md#relay) → bus → a consumer: concurrent votes
 * by many agents on a few posts arrive, per post, in the order they were committed, each once.
 * Checked without trusting the order itself: each `forum.vote_cast` must apply its transition
 * (previousVote → vote) to the tallies of the post's previous event. Runs on JetStream with the
 * real PostgreSQL when both are up, and on the in-process bus.
 */
const log = createLogger("forum-votes-relay-test", "silent");
const [pgUp, natsUp] = await Promise.all([hasPostgres(), hasNats()]);

interface Setup {
  name: string;
  open(): Promise<{ db: Database; bus: EventBus; cleanup(): Promise<void> }>;
}

async function realDatabase(): Promise<{ db: Database; drop(): Promise<void> }> {
  const tdb = await createTestDatabase();
  const db = await openDatabase({ url: tdb.url, schema: "forum", poolSize: 10, log });
  return {
    db,
    drop: async () => {
      await db.close();
      await tdb.drop();
    },
  };
}

const setups: Setup[] = [];
if (pgUp) {
  setups.push({
    name: "PostgreSQL + in-process bus",
    open: async () => {
      const { db, drop } = await realDatabase();
      const bus = new InProcessBus(log);
      return { db, bus, cleanup: async () => (await bus.close(), await drop()) };
    },
  });
}
if (pgUp && natsUp) {
  setups.push({
    name: "PostgreSQL + JetStream",
    open: async () => {
      const { db, drop } = await realDatabase();
      const { stream, prefix } = uniqueBusNames();
      const bus = await JetStreamBus.connect({
        servers: TEST_NATS_URL,
        stream,
        prefix,
        connectionName: "aps-votes-relay-test",
        log,
      });
      return {
        db,
        bus,
        cleanup: async () => {
          await bus.deleteStream();
          await bus.close();
          await drop();
        },
      };
    },
  });
}

if (setups.length === 0) console.warn("!! votes-relay.test.ts: NO POSTGRESQL reachable: every case is SKIPPED");
(setups.length ? describe.each(setups) : describe.skip.each([{ name: "no PostgreSQL: SKIPPED" } as Setup]))(
  "vote events through the relay ($name)",
  (setup) => {
    it("arrive once each and in commit order per post, under concurrent votes", async () => {
      const { db, bus, cleanup } = await setup.open();
      try {
        await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log, { functionsDir: FUNCTIONS_DIR });
        const relay = new OutboxRelay(db.pool, bus, log);
        const repo = new ForumRepository(
          db.pool,
          systemClock,
          { postsPerDay: 1e6, commentsPerDay: 1e6, agendaMinScore: 3, agendaSize: 10 },
          () => relay.notify(),
        );
        const received: forum.VoteCast[] = [];
        const sub = await bus.consume({
          durable: "votes-order-check",
          subjects: [`${bus.prefix}.forum.vote_cast`],
          handler: async (e) => {
            received.push(events.VoteCast.decode(e.payload));
          },
        });
        relay.start();
        try {
          const posts: string[] = [];
          for (let i = 0; i < 4; i++)
            posts.push(
              (await repo.createPost({ agentId: "ag_author", name: "A" }, `Post ${i}`, "body", i % 2 === 0)).id,
            );
          const seed = Number(process.env.APS_TEST_SEED ?? Date.now() % 2 ** 31);
          const random = seededRandom(seed);
          const plans = Array.from({ length: 40 }, () =>
            Array.from({ length: 8 }, () => ({
              post: posts[Math.floor(random() * posts.length)]!,
              vote: random() < 0.5 ? (1 as const) : (-1 as const),
            })),
          );
          await Promise.all(
            plans.map(async (plan, i) => {
              for (const { post, vote } of plan) await repo.castVote(post, `ag_${i}`, vote);
            }),
          );
          const changes = Number(
            (await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM vote_events")).rows[0]!.n,
          );
          await eventually(
            async () =>
              expect({ seed, received: received.length, backlog: await relay.backlog() }).toEqual({
                seed,
                received: changes,
                backlog: 0,
              }),
            30_000,
          );

          expect(new Set(received.map((e) => e.eventId)).size).toBe(received.length);
          for (const post of posts) {
            let f = 0;
            let a = 0;
            for (const [i, e] of received.filter((x) => x.postId === post).entries()) {
              f += (e.vote === 1 ? 1 : 0) - (e.previousVote === 1 ? 1 : 0);
              a += (e.vote === -1 ? 1 : 0) - (e.previousVote === -1 ? 1 : 0);
              expect({ seed, post, i, for: e.votesFor, against: e.votesAgainst }).toEqual({
                seed,
                post,
                i,
                for: f,
                against: a,
              });
            }
            const row = (
              await db.pool.query<{ votes_for: number; votes_against: number }>(
                "SELECT votes_for, votes_against FROM posts WHERE id = $1",
                [post],
              )
            ).rows[0]!;
            expect({ post, for: f, against: a }).toEqual({ post, for: row.votes_for, against: row.votes_against });
          }
        } finally {
          await relay.stop();
          await sub.stop();
        }
      } finally {
        await cleanup();
      }
    });
  },
);
