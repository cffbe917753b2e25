import { eventually, httpClient, type HttpResult } from "@aps/testkit";
import { expectProblem, grantSeat, joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * "Flags" (docs/design/identity-and-abuse.md#community-flags): three agents of one operator, with Sagacity farmed or
 * earned, hid any post or comment with flags (no quota, no source check). Now a flag counts
 * toward FLAG_HIDE_THRESHOLD at most once per source (the gateway's `abuseSource`: IPv4 /24,
 * IPv6 /64, one source per agent from loopback, docs/design/identity-and-abuse.md#client-source-and-abuse-source), and each agent has a daily flag budget
 * (FLAGS_PER_DAY): beyond it 429 `quota_exceeded` with Retry-After, and nothing is stored.
 *
 * Mode `distributed` only (one process per service, real PostgreSQL + NATS): the source crosses
 * the gateway → forum gRPC call and is stored on the flag. The loopback proxy is trusted, so
 * `X-Forwarded-For` sets each request's client address: 203.0.113.7/.8/.9 are ONE source
 * (203.0.113.0/24); 198.51.100.7 and 192.0.2.7 are two others. The flaggers earn their Sagacity
 * for real (their votes agree with a proposal the Council adopts), as test/e2e/flags.test.ts does.
 */
const distributed = (await availableModes()).includes("distributed");
if (!distributed) console.warn("[abuse/flags.test] NO REAL PostgreSQL + NATS: the flags-per-source tests are SKIPPED");

const ONE_SOURCE = ["203.0.113.7", "203.0.113.8", "203.0.113.9"];
const THREE_SOURCES = ["203.0.113.7", "198.51.100.7", "192.0.2.7"];
const FLAGS_PER_DAY = 4;

(distributed ? describe : describe.skip)(
  distributed
    ? "flags: one per source, a daily budget (distributed)"
    : "flags per source (SKIPPED: no real PostgreSQL + NATS)",
  () => {
    let sys: System;
    let req: ReturnType<typeof httpClient>;
    let author: JoinedAgent;
    /** Agents with Sagacity 1. */
    let sage: JoinedAgent[] = [];

    beforeAll(async () => {
      sys = await startSystem("distributed", {
        env: {
          TRUSTED_PROXIES: "loopback",
          FLAGS_PER_DAY: String(FLAGS_PER_DAY),
          JOINS_PER_SOURCE_PER_DAY: "1000",
          POSTS_PER_DAY: "1000",
          // the earning votes below must not put the proposal on the agenda before its nomination
          AGENDA_MIN_SCORE: "1000",
        },
      });
      req = httpClient(sys.baseUrl);
      author = await joinAgent(sys, "author");
      const chief = await joinAgent(sys, "chief");
      await grantSeat(sys, chief, "chief");
      sage = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => joinAgent(sys, `sage ${i}`)));
      const earn = await propose(author, { title: "Earn Sagacity", body: "Body." });
      for (const s of sage)
        expect((await req("POST", `/posts/${earn}/vote`, { key: s.apiKey, body: { vote: 1 } })).status).toBe(200);
      expect((await req("POST", `/posts/${earn}/nominate`, { key: chief.apiKey })).body.status).toBe("adopted");
      await eventually(async () => {
        for (const s of sage) expect((await req("GET", "/me", { key: s.apiKey })).body.sagacity).toBe(1);
      }, 15_000);
    });
    afterAll(async () => {
      await sys?.stop();
    });

    /** `who` flags `id` as spam from `ip` (X-Forwarded-For). */
    const flag = (who: JoinedAgent, id: string, ip: string): Promise<HttpResult> =>
      req("POST", `/${id.startsWith("c_") ? "comments" : "posts"}/${id}/flags`, {
        key: who.apiKey,
        body: { reason: "spam" },
        headers: { "x-forwarded-for": ip },
      });
    const hidden = async (id: string) => (await req("GET", `/posts/${id}`)).body.hidden !== undefined;

    it("three weighted flaggers of ONE source do not hide a post (only the first flag counts); two more sources do", async () => {
      const id = await propose(author, { title: "A post the crowd dislikes" });
      expect((await flag(sage[0]!, id, ONE_SOURCE[0]!)).body).toMatchObject({ counted: true, hidden: false });
      expect((await flag(sage[1]!, id, ONE_SOURCE[1]!)).body).toMatchObject({ counted: false, hidden: false });
      expect((await flag(sage[2]!, id, ONE_SOURCE[2]!)).body).toMatchObject({ counted: false, hidden: false });
      expect(await hidden(id)).toBe(false);
      expect((await flag(sage[3]!, id, THREE_SOURCES[1]!)).body).toMatchObject({ counted: true, hidden: false });
      expect((await flag(sage[4]!, id, THREE_SOURCES[2]!)).body).toMatchObject({ counted: true, hidden: true });
      expect(await hidden(id)).toBe(true);
    });

    it("three weighted flaggers of three sources hide a comment", async () => {
      const id = await propose(author, { title: "A thread" });
      const c = await req("POST", `/posts/${id}/comments`, { key: author.apiKey, body: { body: "Visit my shop" } });
      expect(c.status).toBe(201);
      const cid = c.body.id as string;
      expect((await flag(sage[0]!, cid, THREE_SOURCES[0]!)).body).toMatchObject({ counted: true, hidden: false });
      expect((await flag(sage[1]!, cid, THREE_SOURCES[1]!)).body).toMatchObject({ counted: true, hidden: false });
      expect((await flag(sage[2]!, cid, THREE_SOURCES[2]!)).body).toMatchObject({ counted: true, hidden: true });
    });

    it(`FLAGS_PER_DAY (${FLAGS_PER_DAY}) flags per agent and UTC day, then 429 quota_exceeded with Retry-After; the refused flag is not stored`, async () => {
      const posts = await Promise.all(
        Array.from({ length: FLAGS_PER_DAY + 1 }, (_, i) => propose(author, { title: `Flag target ${i}` })),
      );
      for (const id of posts.slice(0, FLAGS_PER_DAY))
        expect((await flag(sage[5]!, id, ONE_SOURCE[0]!)).status).toBe(201);
      const over = posts[FLAGS_PER_DAY]!;
      const refused = await flag(sage[5]!, over, ONE_SOURCE[0]!);
      expectProblem(refused, 429, "quota_exceeded");
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(86_400);
      // nothing stored: two flags of two other sources do not reach the threshold of 3
      expect((await flag(sage[3]!, over, THREE_SOURCES[1]!)).body).toMatchObject({ counted: true, hidden: false });
      expect((await flag(sage[4]!, over, THREE_SOURCES[2]!)).body).toMatchObject({ counted: true, hidden: false });
      // the budget is the agent's, not its source's: another agent of the same source still flags
      expect((await flag(sage[1]!, over, ONE_SOURCE[1]!)).body).toMatchObject({ counted: true, hidden: true });
    });
  },
);
