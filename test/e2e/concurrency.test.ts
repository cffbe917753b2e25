import { httpClient, seededRandom, type HttpResult } from "@aps/testkit";
import { joinAgent, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * Many agents writing at once over HTTP: the vote tallies of a post must equal what the agents'
 * acknowledged votes add up to (one vote per identity, changeable — seed "Voting"), and posts
 * created concurrently are each listed exactly once. Runs in-process (embedded PostgreSQL, and real
 * PostgreSQL + NATS when present) and in the multi-process topology, where the gateway and the
 * forum are separate processes.
 */
const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real" || m === "distributed");

type Agent = JoinedAgent;

type Vote = 1 | -1;

/** {for, against, score} of a set of current votes, counted by the test itself. */
function tally(votes: Iterable<Vote>): { for: number; against: number; score: number } {
  let f = 0;
  let a = 0;
  for (const v of votes) {
    if (v === 1) f++;
    else a++;
  }
  return { for: f, against: a, score: f - a };
}

describe.each(modes)("concurrent writers (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  const seed = Number(process.env.APS_TEST_SEED ?? Date.now() % 2 ** 31);
  const random = seededRandom(seed);
  const pick = (): Vote => (random() < 0.5 ? 1 : -1);

  beforeAll(async () => {
    // every agent joins from 127.0.0.1
    sys = await startSystem(mode, { env: { JOINS_PER_SOURCE_PER_DAY: "10000" } });
    req = httpClient(sys.baseUrl);
  });
  afterAll(async () => {
    await sys?.stop();
  });

  /** `n` agents joining all at once. */
  async function joinMany(n: number, prefix: string): Promise<Agent[]> {
    const agents = await Promise.all(Array.from({ length: n }, (_, i) => joinAgent(sys, `${prefix}-${i}`)));
    expect(new Set(agents.map((a) => a.agentId)).size).toBe(n);
    expect(new Set(agents.map((a) => a.apiKey)).size).toBe(n);
    return agents;
  }

  /** Casts `vote`; expects the acknowledgement to echo it with a well-formed tally. */
  async function cast(a: Agent, postId: string, vote: Vote): Promise<HttpResult> {
    const r = await req("POST", `/posts/${postId}/vote`, { key: a.apiKey, body: { vote } });
    expect({ agent: a.name, status: r.status, vote: r.body?.vote }).toEqual({ agent: a.name, status: 200, vote });
    const t = r.body.votes as { for: number; against: number; score: number };
    expect(t.score).toBe(t.for - t.against);
    expect(t.for).toBeGreaterThanOrEqual(0);
    expect(t.against).toBeGreaterThanOrEqual(0);
    return r;
  }

  async function votesOf(postId: string, key?: string): Promise<{ votes: unknown; myVote?: Vote | null }> {
    const r = await req("GET", `/posts/${postId}`, key ? { key } : {});
    expect(r.status).toBe(200);
    return r.body;
  }

  it("50 agents voting and flipping at once: the tallies equal their last acknowledged votes", async () => {
    const agents = await joinMany(50, "voter");
    const [author] = await joinMany(1, "author");
    const p = await req("POST", "/posts", {
      key: author!.apiKey,
      body: { title: "Everyone votes on this", body: "at once", is_arch_design: false },
    });
    expect(p.status).toBe(201);
    const postId: string = p.body.id;
    const last = new Map<string, Vote>();

    // 1. everyone votes at once
    const first = agents.map(() => pick());
    await Promise.all(agents.map((a, i) => cast(a, postId, first[i]!)));
    agents.forEach((a, i) => last.set(a.agentId, first[i]!));
    expect({ seed, votes: (await votesOf(postId)).votes }).toEqual({ seed, votes: tally(last.values()) });

    // 2. each agent changes its mind 1–6 times, one request after another, all agents at once
    //    (mostly flips, sometimes the same vote again, which must change nothing)
    const plans = agents.map(() => Array.from({ length: 1 + Math.floor(random() * 6) }, () => random() < 0.75));
    const acks: number[] = [];
    await Promise.all(
      agents.map(async (a, i) => {
        for (const flip of plans[i]!) {
          const prev = last.get(a.agentId)!;
          const next: Vote = flip ? (-prev as Vote) : prev;
          const r = await cast(a, postId, next);
          last.set(a.agentId, next); // acknowledged
          acks.push(r.body.votes.for + r.body.votes.against);
        }
      }),
    );
    expect(acks).toHaveLength(plans.reduce((n, p) => n + p.length, 0));
    // every agent had already voted once: no acknowledgement may count more or fewer voters
    expect(new Set(acks)).toEqual(new Set([50]));

    const truth = tally(last.values());
    expect({ seed, votes: (await votesOf(postId)).votes }).toEqual({ seed, votes: truth });
    // the list view shows the same tallies as the detail
    const listed = (await req("GET", "/posts?sort=new&limit=100")).body.items.find(
      (x: { id: string }) => x.id === postId,
    );
    expect(listed.votes).toEqual(truth);
    // myVote of a sample of agents (and the author, who did not vote)
    const sample = agents.filter(() => random() < 0.4).concat(agents[0]!, agents[49]!);
    const mine = await Promise.all(
      sample.map(async (a) => ({ agent: a.name, myVote: (await votesOf(postId, a.apiKey)).myVote })),
    );
    expect(mine).toEqual(sample.map((a) => ({ agent: a.name, myVote: last.get(a.agentId) })));
    expect((await votesOf(postId, author!.apiKey)).myVote).toBeNull();
  });

  it("conflicting votes sent at the same instant by the same agents still add up to their stored votes", async () => {
    const agents = await joinMany(20, "racer");
    const [author] = await joinMany(1, "race-author");
    const p = await req("POST", "/posts", {
      key: author!.apiKey,
      body: { title: "Racing votes", body: "same agent, many requests", is_arch_design: false },
    });
    expect(p.status).toBe(201);
    const postId: string = p.body.id;
    // each agent fires 2–5 votes of both signs without waiting: the order they apply in is up
    // to the server, but whichever wins, the tallies must count each agent exactly once
    const sent = new Map<string, Set<Vote>>();
    const requests = agents.flatMap((a) => {
      const votes: Vote[] = [1, -1, ...Array.from({ length: Math.floor(random() * 4) }, () => pick())];
      sent.set(a.agentId, new Set(votes));
      return votes.map((v) => () => cast(a, postId, v));
    });
    await Promise.all(requests.map((send) => send()));
    const stored = await Promise.all(agents.map(async (a) => ({ a, v: (await votesOf(postId, a.apiKey)).myVote })));
    for (const { a, v } of stored) {
      expect({ agent: a.name, ok: v === 1 || v === -1 }).toEqual({ agent: a.name, ok: true });
      expect(sent.get(a.agentId)!.has(v as Vote)).toBe(true);
    }
    expect({ seed, votes: (await votesOf(postId)).votes }).toEqual({
      seed,
      votes: tally(stored.map((s) => s.v as Vote)),
    });
  });

  it("20 agents posting at once: every post is listed exactly once, in both sort orders and across pages", async () => {
    const agents = await joinMany(20, "poster");
    const rs = await Promise.all(
      agents.map((a, i) =>
        req("POST", "/posts", {
          key: a.apiKey,
          body: { title: `concurrent post ${i}`, body: `by ${a.name}`, is_arch_design: i % 2 === 0 },
        }),
      ),
    );
    expect(rs.map((r) => r.status)).toEqual(rs.map(() => 201));
    const created = rs.map((r, i) => ({
      id: r.body.id as string,
      title: `concurrent post ${i}`,
      author: agents[i]!.agentId,
    }));
    expect(new Set(created.map((c) => c.id)).size).toBe(20);
    for (const [i, r] of rs.entries())
      expect(r.body).toMatchObject({
        title: `concurrent post ${i}`,
        author: { agentId: agents[i]!.agentId, name: agents[i]!.name },
      });

    const mine = new Set(created.map((c) => c.id));
    for (const sort of ["new", "hot"] as const) {
      for (const limit of [100, 3]) {
        const seen: { id: string; title: string; author: { agentId: string } }[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page: HttpResult<{ items: typeof seen; nextCursor: string | null }> = await req(
            "GET",
            `/posts?sort=${sort}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
          );
          expect(page.status).toBe(200);
          seen.push(...page.body.items);
          cursor = page.body.nextCursor;
          expect(++pages).toBeLessThan(200);
        } while (cursor);
        const ours = seen.filter((p) => mine.has(p.id));
        expect({ sort, limit, count: ours.length }).toEqual({ sort, limit, count: 20 });
        expect(new Set(seen.map((p) => p.id)).size).toBe(seen.length);
        expect(
          ours
            .map((p) => ({ id: p.id, title: p.title, author: p.author.agentId }))
            .sort((x, y) => x.id.localeCompare(y.id)),
        ).toEqual([...created].sort((x, y) => x.id.localeCompare(y.id)));
      }
    }
    // and by kind
    const arch = (await req("GET", "/posts?kind=arch&limit=100")).body.items.filter((p: { id: string }) =>
      mine.has(p.id),
    );
    const free = (await req("GET", "/posts?kind=free&limit=100")).body.items.filter((p: { id: string }) =>
      mine.has(p.id),
    );
    expect([arch.length, free.length]).toEqual([10, 10]);
  });
});
