import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createTestDatabase,
  deleteTestStream,
  hasNats,
  hasPostgres,
  httpClient,
  TEST_NATS_URL,
  uniqueBusNames,
  type TestDatabase,
} from "@aps/testkit";
import { startSystem, type System } from "../support/system.js";
import { joinAgents } from "../support/fixtures.js";
import { eventually, FAULT_LIMITS, ok } from "./support.js";

/**
 * Graceful shutdown (docs/design/operations.md#at-a-glance): the all-in-one
 * process (`node services/all-in-one/dist/main.js`, what `npm start` runs) gets SIGTERM in the
 * middle of a load of writes (posts, comments, votes from parallel agents). It must exit 0, and
 * after a restart on the same data every write that was answered 2xx is there — counted one by
 * one. Runs on the embedded databases (always) and on real PostgreSQL + NATS when present.
 *
 * What an answer may be, by when the request was sent (docs/reliability.md, SIGTERM row):
 * - sent before SIGTERM: 2xx, or (only if the failure comes after SIGTERM) a connection cut at the
 *   end of the 10 s drain. Any other status — a 4xx, a 5xx, even a 503 — fails the test: the
 *   gateway drains in-flight requests before the services stop, so nothing may refuse them; and a
 *   connection failure before SIGTERM fails it too;
 * - sent after SIGTERM: 2xx (the drain answers requests arriving on open keep-alive connections),
 *   503 problem+json (a service already stopping), or a connection refused / cut (the gateway
 *   stopped accepting, or the drain ended). Any other status fails the test.
 * The load runs until 5 posts per agent are accepted (a condition, not a fixed time), then SIGTERM.
 */
const variants: ("embedded" | "real")[] =
  (await hasPostgres()) && (await hasNats()) ? ["embedded", "real"] : ["embedded"];
if (!variants.includes("real"))
  console.warn("[faults/sigterm] NO REAL PostgreSQL + NATS: only the embedded variant runs");
const TIMEOUT = 240_000;
const WORKERS = 8;
/** Posts accepted before SIGTERM is sent: 5 per agent (plus their comments and votes). */
const POSTS_BEFORE_SIGTERM = 5 * WORKERS;

/** One answer that was not 2xx: when it was sent relative to SIGTERM, what it was. */
interface NonSuccess {
  afterSigterm: boolean;
  what: string;
  status: number;
  code?: string;
}

describe.each(variants)("SIGTERM of the all-in-one process during writes (%s)", (variant) => {
  let dataDir: string;
  let db: TestDatabase | undefined;
  const names = uniqueBusNames();
  let env: Record<string, string>;
  let sys: System | undefined;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "aps-sigterm-"));
    env = { ...FAULT_LIMITS };
    if (variant === "real") {
      db = await createTestDatabase();
      Object.assign(env, {
        DATABASE_URL: db.url,
        NATS_URL: TEST_NATS_URL,
        NATS_STREAM: names.stream,
        APS_SUBJECT_PREFIX: names.prefix,
      });
    }
  }, TIMEOUT);
  afterAll(async () => {
    await sys?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    if (variant === "real") {
      await deleteTestStream(names.stream);
      await db?.drop();
    }
  }, TIMEOUT);

  it(
    "exits 0 and keeps every write answered 2xx",
    async () => {
      sys = await startSystem("aio-process", { dataDir, env });
      const req = httpClient(sys.baseUrl);
      const agents = await joinAgents(req, WORKERS, `sigterm-${variant}`);
      const posts = new Map<string, { comments: number; votes: number }>();
      let sent = 0;
      let cut = 0;
      let stopAt = Infinity;
      const nonSuccess: NonSuccess[] = [];
      /** Records a non-2xx answer to a request sent at `sentAt`. */
      const refuse = (sentAt: number, what: string, r: { status: number; body: unknown }) =>
        nonSuccess.push({
          afterSigterm: sentAt >= stopAt,
          what,
          status: r.status,
          code: (r.body as { code?: string } | undefined)?.code,
        });

      /** One agent writing until the gateway stops answering: post, comment on it, vote on it. */
      const worker = async (k: number) => {
        const a = agents[k]!;
        let last: string | undefined;
        for (let i = 0; ; i++) {
          const sentAt = Date.now();
          try {
            sent++;
            const step = i % 3;
            if (step === 0 || !last) {
              const r = await req("POST", "/posts", {
                key: a.apiKey,
                body: { title: `sigterm ${k}/${i}`, body: "load during shutdown", is_arch_design: i % 2 === 0 },
              });
              if (r.status === 201) posts.set((last = r.body.id as string), { comments: 0, votes: 0 });
              else refuse(sentAt, "POST /posts", r);
            } else if (step === 1) {
              const r = await req("POST", `/posts/${last}/comments`, { key: a.apiKey, body: { body: `comment ${i}` } });
              if (r.status === 201) posts.get(last)!.comments++;
              else refuse(sentAt, "POST /posts/{id}/comments", r);
            } else {
              const r = await req("POST", `/posts/${last}/vote`, { key: a.apiKey, body: { vote: 1 } });
              if (r.status === 200) posts.get(last)!.votes = 1;
              else refuse(sentAt, "POST /posts/{id}/vote", r);
            }
          } catch {
            // connection refused (the gateway stopped accepting) or cut after the 10 s drain
            if (Date.now() < stopAt) throw new Error("a request failed before SIGTERM");
            cut++;
            return;
          }
        }
      };
      const load = Promise.all([...Array(WORKERS).keys()].map(worker));
      // Load until enough writes are accepted (a condition with a generous ceiling, not a sleep); a
      // worker that failed before SIGTERM rejects `load` and fails the test here.
      await Promise.race([
        eventually(async () => expect(posts.size).toBeGreaterThanOrEqual(POSTS_BEFORE_SIGTERM), 120_000, 50),
        load.then(() => {
          throw new Error("the load ended before SIGTERM");
        }),
      ]);
      const before = posts.size;
      stopAt = Date.now();
      const code = await sys.process!.stop("SIGTERM");
      const exitMs = Date.now() - stopAt;
      await load;
      // on a failed shutdown, the process's last lines say why ("shutdown failed" and its error)
      expect({ code, tail: code === 0 ? "" : sys.process!.output().split("\n").slice(-30).join("\n") }).toEqual({
        code: 0,
        tail: "",
      });
      expect(before).toBeGreaterThanOrEqual(POSTS_BEFORE_SIGTERM);
      // No answer other than 2xx before SIGTERM; after it only 503 (a service already stopping).
      expect(nonSuccess.filter((n) => !n.afterSigterm)).toEqual([]);
      expect(nonSuccess.filter((n) => n.status !== 503)).toEqual([]);

      // restart on the same data: every accepted write is there
      sys = await startSystem("aio-process", { dataDir, env });
      const req2 = httpClient(sys.baseUrl);
      let comments = 0;
      let votes = 0;
      const missing: string[] = [];
      for (const [id, want] of posts) {
        const r = await req2("GET", `/posts/${id}`);
        if (r.status !== 200) {
          missing.push(id);
          continue;
        }
        expect({ id, comments: r.body.commentCount, for: r.body.votes.for }).toEqual({
          id,
          comments: want.comments,
          for: want.votes,
        });
        comments += want.comments;
        votes += want.votes;
      }
      expect(missing).toEqual([]);
      // the list agrees (a request cut by the shutdown may have been applied, so ≥, not =)
      const listed = ok(await req2("GET", "/posts?kind=all&sort=new&limit=100"), 200, "list");
      expect(listed.items.length).toBeGreaterThanOrEqual(Math.min(100, posts.size));
      console.log(
        `[faults/sigterm] ${variant}: ${sent} requests sent by ${WORKERS} agents, ${posts.size} posts + ${comments} comments + ${votes} votes answered 2xx ` +
          `(all present after restart, lost 0); SIGTERM after ${before} posts; ` +
          `0 non-2xx before SIGTERM; after it ${nonSuccess.length} answered 503, ${cut} connections refused or cut; exit code ${code} ${exitMs} ms after SIGTERM`,
      );
    },
    TIMEOUT,
  );
});
