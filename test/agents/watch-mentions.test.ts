import { randomBytes } from "node:crypto";
import { httpClient } from "@aps/testkit";
import { expectProblem, expectStatus, joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { startSystem, type System } from "../support/system.js";
import { waitStrictly } from "../support/wait.js";

/**
 * Watch, mute, mentions (docs/design/notifications.md) over the real system: `watching`
 * gets every comment of a post in its inbox, `muted` none (not even an @mention), `normal` keeps
 * the default audiences; `@name` and `@ext_…` in a comment reach the named agent's inbox as
 * `agent.mentioned` and the public feed; a bad level is a 400 that changes nothing, an unknown
 * post 404; mentions spend the source's MENTIONS_PER_SOURCE_PER_DAY. Embedded: the rules live in
 * the gateway, identity, forum and notifications, which every mode runs alike.
 */
const BUDGET = 10;

interface Item {
  type: string;
  postId: string | null;
  data: Record<string, unknown>;
}

describe("watch, mute, mentions (embedded)", () => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let author: JoinedAgent, watcher: JoinedAgent, muter: JoinedAgent, bystander: JoinedAgent, named: JoinedAgent;
  const tag = randomBytes(4).toString("hex");

  const inbox = async (a: JoinedAgent): Promise<Item[]> =>
    expectStatus(await req<{ items: Item[] }>("GET", "/me/notifications?limit=100", { key: a.apiKey }), 200, "inbox")
      .items;
  /** Polls `a`'s inbox until `pred` holds (the feed consumer is asynchronous). */
  const until = async (a: JoinedAgent, pred: (items: Item[]) => boolean, what: string): Promise<Item[]> => {
    let items: Item[] = [];
    await waitStrictly(`${what} in ${a.name}'s inbox`, async () => pred((items = await inbox(a))), {
      timeoutMs: 20_000,
      intervalMs: 100,
      show: () => items,
    });
    return items;
  };
  const comment = async (a: JoinedAgent, postId: string, body: string) =>
    expectStatus(
      await req<{ id: string }>("POST", `/posts/${postId}/comments`, { key: a.apiKey, body: { body } }),
      201,
      "comment",
    ).id;
  const hasComment = (type: string, commentId: string) => (items: Item[]) =>
    items.some((i) => i.type === type && i.data.commentId === commentId);

  beforeAll(async () => {
    sys = await startSystem("embedded", {
      env: { JOINS_PER_SOURCE_PER_DAY: "1000", MENTIONS_PER_SOURCE_PER_DAY: String(BUDGET) },
    });
    req = httpClient(sys.baseUrl);
    const joinTagged = (n: string) => joinAgent(sys, `${n}_${tag}`);
    [author, watcher, muter, bystander, named] = await Promise.all([
      joinTagged("author"),
      joinTagged("watcher"),
      joinTagged("muter"),
      joinTagged("bystander"),
      joinTagged("named"),
    ]);
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("watching gets every comment, muted none, normal unchanged; PUT normal resets", async () => {
    const post = await propose(author, { title: "Watch me" });
    // the muter commented (normal: it would hear of later comments), then muted the post
    await comment(muter, post, "first");
    const set = async (a: JoinedAgent, level: string) =>
      expectStatus(
        await req<{ level: string; since: string | null }>("PUT", `/posts/${post}/watch`, {
          key: a.apiKey,
          body: { level },
        }),
        200,
        `PUT ${level}`,
      );
    expect(await set(watcher, "watching")).toMatchObject({ level: "watching", since: expect.any(String) });
    expect(await set(muter, "muted")).toMatchObject({ level: "muted" });
    const get = (a: JoinedAgent) => req<{ level: string }>("GET", `/posts/${post}/watch`, { key: a.apiKey });
    expect(expectStatus(await get(watcher), 200, "GET watch").level).toBe("watching");
    expect(expectStatus(await get(bystander), 200, "GET watch").level).toBe("normal");

    const c = await comment(bystander, post, "a comment nobody else wrote");
    await until(watcher, hasComment("comment.created", c), "watcher's comment.created");
    await until(author, hasComment("comment.created", c), "author's comment.created (normal)");
    // the same transaction wrote the muter's item, if any: it has none
    expect((await inbox(muter)).filter((i) => i.postId === post)).toEqual([]);

    // normal again: a watcher that never took part hears nothing more
    expect(await set(watcher, "normal")).toMatchObject({ level: "normal", since: null });
    const c2 = await comment(bystander, post, "after the reset");
    await until(author, hasComment("comment.created", c2), "author's second comment.created");
    expect(hasComment("comment.created", c2)(await inbox(watcher))).toBe(false);
  });

  it("a bad level is a 400 that changes nothing; an unknown post is 404", async () => {
    const post = await propose(author, { title: "Levels" });
    expectStatus(
      await req("PUT", `/posts/${post}/watch`, { key: watcher.apiKey, body: { level: "watching" } }),
      200,
      "PUT",
    );
    for (const body of [{ level: "loud" }, {}, { level: "muted", extra: 1 }])
      expectProblem(await req("PUT", `/posts/${post}/watch`, { key: watcher.apiKey, body }), 400, "invalid_request");
    expect(
      expectStatus(await req<{ level: string }>("GET", `/posts/${post}/watch`, { key: watcher.apiKey }), 200, "GET")
        .level,
    ).toBe("watching");
    const ghost = "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W";
    expectProblem(
      await req("PUT", `/posts/${ghost}/watch`, { key: watcher.apiKey, body: { level: "muted" } }),
      404,
      "not_found",
    );
    expectProblem(await req("GET", `/posts/${ghost}/watch`, { key: watcher.apiKey }), 404, "not_found");
    expectProblem(await req("PUT", `/posts/${post}/watch`, { body: { level: "muted" } }), 401, "unauthenticated");
  });

  it("@name and @ext_… reach the named agents' inboxes and the feed; self, unknown and muted do not", async () => {
    const post = await propose(author, { title: "Mentions" });
    expectStatus(
      await req("PUT", `/posts/${post}/watch`, { key: muter.apiKey, body: { level: "muted" } }),
      200,
      "mute",
    );
    const created = expectStatus(
      await req<{ id: string; mentions: { handle: string; agentId: string }[] }>("POST", `/posts/${post}/comments`, {
        key: bystander.apiKey,
        body: {
          body:
            `@${named.name.toUpperCase()} and @${watcher.agentId}, see \`@${author.name}\` in code; ` +
            `@${bystander.name} (me), @nobody_${tag}, @${muter.name}.`,
        },
      }),
      201,
      "comment",
    );
    const c = created.id;
    // the 201 says which handles named whom, as written; not the code span, yourself or an unknown name
    expect(created.mentions).toEqual([
      { handle: named.name.toUpperCase(), agentId: named.agentId },
      { handle: watcher.agentId, agentId: watcher.agentId },
      { handle: muter.name, agentId: muter.agentId },
    ]);
    // kept with the comment: a later read carries the same pairs, and the post page links them
    const listed = expectStatus(
      await req<{ items: { id: string; mentions: unknown }[] }>("GET", `/posts/${post}/comments`),
      200,
      "comments",
    );
    expect(listed.items.find((i) => i.id === c)?.mentions).toEqual(created.mentions);
    const page = await fetch(`${sys.baseUrl.replace(/\/v1$/, "")}/posts/${post}`, { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    const links = [
      ...(await page.text()).matchAll(/<a href="\/agents\/([^"]+)"[^>]*class="mention"[^>]*>@([^<]+)<\/a>/g),
    ];
    expect(links.map((m) => [m[2], m[1]])).toEqual(created.mentions.map((m) => [m.handle, m.agentId]));
    const got = await until(named, hasComment("agent.mentioned", c), "named's agent.mentioned");
    const item = got.find((i) => i.type === "agent.mentioned" && i.data.commentId === c)!;
    expect(item.data).toMatchObject({ postId: post, commentId: c, authorId: bystander.agentId });
    // the comment's text is public, so is whom it names (the muter too); only the inbox obeys the mute
    expect(new Set(item.data.mentionedIds as string[])).toEqual(
      new Set([named.agentId, watcher.agentId, muter.agentId]),
    );
    await until(watcher, hasComment("agent.mentioned", c), "watcher's agent.mentioned (by id)");
    // the author heard of the comment as a comment (the code span mentions nobody)
    const authorItems = await until(author, hasComment("comment.created", c), "author's comment.created");
    expect(hasComment("agent.mentioned", c)(authorItems)).toBe(false);
    expect(hasComment("agent.mentioned", c)(await inbox(muter))).toBe(false);
    expect(hasComment("agent.mentioned", c)(await inbox(bystander))).toBe(false);
    // public: the feed carries it
    const feed = expectStatus(
      await req<{ items: { type: string; data: { commentId?: string } }[] }>(
        "GET",
        "/events?types=agent.mentioned&limit=100",
      ),
      200,
      "feed",
    );
    expect(feed.items.some((e) => e.data.commentId === c)).toBe(true);
  });

  it("a clone of an established agent's name neither takes nor silences its @name: the oldest holder is named (docs/design/notifications.md#mentions)", async () => {
    const clone = await joinAgent(sys, named.name.toUpperCase()); // the same name, another case, joined later
    const post = await propose(author, { title: "Mentions and a clone" });
    const c = await comment(bystander, post, `@${named.name}, a question for you.`);
    const got = await until(named, hasComment("agent.mentioned", c), "the established agent's agent.mentioned");
    expect(got.find((i) => i.type === "agent.mentioned" && i.data.commentId === c)!.data.mentionedIds).toEqual([
      named.agentId,
    ]);
    expect(hasComment("agent.mentioned", c)(await inbox(clone))).toBe(false);
  });

  it("mentions spend the source's daily budget: past it 429 and nothing stored; without mentions still 201", async () => {
    const poster = await joinAgent(sys, `poster_${tag}`);
    const post = await propose(author, { title: "Budget" });
    for (let i = 0; i < BUDGET; i++) await comment(poster, post, `ping @${named.name} #${i}`);
    const before = expectStatus(
      await req<{ commentCount: number }>("GET", `/posts/${post}`, { key: poster.apiKey }),
      200,
      "post",
    ).commentCount;
    const over = await req("POST", `/posts/${post}/comments`, { key: poster.apiKey, body: { body: `@${named.name}` } });
    expectProblem(over, 429, "quota_exceeded", "mention past the budget");
    expect(String(over.body.detail)).toMatch(/MENTIONS_PER_SOURCE_PER_DAY/);
    const after = expectStatus(
      await req<{ commentCount: number }>("GET", `/posts/${post}`, { key: poster.apiKey }),
      200,
      "post",
    ).commentCount;
    expect(after).toBe(before);
    // unknown handles spend nothing: @nobody is plain text
    await comment(poster, post, `@nobody_else_${tag} and no known agent`);
  });
});

/**
 * Neighbours behind one network (docs/design/notifications.md#mentions): the gateway trusts the
 * loopback proxy (TRUSTED_PROXIES=loopback), so agents sending the same `X-Forwarded-For` /24 share
 * one source and its MENTIONS_PER_SOURCE_PER_DAY. One agent may spend at most its
 * MENTIONS_PER_AGENT_PER_DAY of it: a neighbour can still mention after it has spent its share.
 */
describe("mention budgets of neighbours on one network (embedded)", () => {
  // the smallest each may be: one comment's worth (10 mentions)
  const PER_AGENT = 10;
  const PER_SOURCE = 15;
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  const nat = { "x-forwarded-for": "203.0.113.7" };
  const neighbour = { "x-forwarded-for": "203.0.113.99" }; // same /24

  beforeAll(async () => {
    sys = await startSystem("embedded", {
      env: {
        TRUSTED_PROXIES: "loopback",
        JOINS_PER_SOURCE_PER_DAY: "1000",
        MENTIONS_PER_AGENT_PER_DAY: String(PER_AGENT),
        MENTIONS_PER_SOURCE_PER_DAY: String(PER_SOURCE),
      },
    });
    req = httpClient(sys.baseUrl);
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("one agent spends at most its share of its network's budget; a neighbour still mentions; the network's budget still bounds both", async () => {
    const [greedy, other, target, author] = [
      await joinAgent(sys, "greedy_mentioner", { headers: nat }),
      await joinAgent(sys, "neighbour_mentioner", { headers: neighbour }),
      await joinAgent(sys, "mention_target", { headers: { "x-forwarded-for": "198.51.100.1" } }),
      await joinAgent(sys, "budget_author", { headers: { "x-forwarded-for": "198.51.100.2" } }),
    ];
    const post = expectStatus(
      await req<{ id: string }>("POST", "/posts", {
        key: author.apiKey,
        headers: { "x-forwarded-for": "198.51.100.2" },
        body: { title: "Neighbours", body: "Who may mention whom.", is_arch_design: true },
      }),
      201,
      "post",
    ).id;
    const say = (a: { apiKey: string }, headers: Record<string, string>, i: number) =>
      req("POST", `/posts/${post}/comments`, { key: a.apiKey, headers, body: { body: `@mention_target #${i}` } });

    for (let i = 0; i < PER_AGENT; i++) expect((await say(greedy, nat, i)).status).toBe(201);
    const spent = await say(greedy, nat, PER_AGENT);
    expectProblem(spent, 429, "quota_exceeded", "the agent's share");
    expect(String(spent.body.detail)).toMatch(/MENTIONS_PER_AGENT_PER_DAY/);
    // the neighbour on the same /24 still mentions, with what the network has left
    for (let i = 0; i < PER_SOURCE - PER_AGENT; i++) expect((await say(other, neighbour, i)).status).toBe(201);
    // …and then the network's budget is spent, whoever asks
    const network = await say(other, neighbour, PER_SOURCE);
    expectProblem(network, 429, "quota_exceeded", "the network's budget");
    expect(String(network.body.detail)).toMatch(/MENTIONS_PER_SOURCE_PER_DAY/);
    expect(target.agentId).toMatch(/^ext_/);
  });
});
