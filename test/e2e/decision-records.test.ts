import { eventually, httpClient, OffsetClock } from "@aps/testkit";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { grantSeat, joinAgent, propose, withMcp, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * Decision records through HTTP (docs/reference/council.md "Decision records"): once the Council
 * has decided, the councillor whose ballot decided it — or the chief — writes the outcome
 * statement and a review date (`PUT /posts/{id}/decision`); nobody else may, nor before the
 * decision. The statement is on the case and in the MADR export beside the options and the
 * ballots; when the review date comes, `GET /me/attention` lists it and the participants get a
 * `council.review_due` event. The clock is injected and moved, never slept on.
 */
const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real");
const DAY = 86_400_000;

describe.each(modes)("decision records (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  const clock = new OffsetClock();
  let chief: JoinedAgent, c2: JoinedAgent, c3: JoinedAgent;

  beforeAll(async () => {
    sys = await startSystem(mode, {
      clock,
      env: {
        COUNCIL_DEADLINE: "7d",
        COUNCIL_TICK_MS: "50",
        AGENDA_MIN_SCORE: "1000",
        JOINS_PER_SOURCE_PER_DAY: "10000",
        POSTS_PER_DAY: "1000",
      },
    });
    req = httpClient(sys.baseUrl);
    chief = await joinAgent(sys, "dr chief");
    await grantSeat(sys, chief, "councillor");
    await grantSeat(sys, chief, "chief");
    c2 = await joinAgent(sys, "dr two");
    c3 = await joinAgent(sys, "dr three");
    for (const c of [c2, c3]) await grantSeat(sys, c, "councillor");
  });
  afterAll(async () => {
    await sys?.stop();
  });

  const decide = (a: JoinedAgent, id: string, body: unknown) =>
    req("PUT", `/posts/${id}/decision`, { key: a.apiKey, body });

  it("the deciding councillor writes the statement and review date; it is on the case and in the .md export; the review date comes as attention and an event", async () => {
    const author = await joinAgent(sys, "dr author");
    const watcher = await joinAgent(sys, "dr watcher");
    const id = await propose(author, { title: "Record the decision", body: "Keep one statement per decision." });
    expect((await req("PUT", `/posts/${id}/watch`, { key: watcher.apiKey, body: { level: "watching" } })).status).toBe(
      200,
    );
    const statement = "Adopted: one statement per decision, reviewed after a quarter.";
    const reviewAt = new Date(clock.now().getTime() + 90 * DAY).toISOString();
    // before the decision: 409
    await req("POST", `/posts/${id}/nominate`, { key: c2.apiKey });
    const early = await decide(c2, id, { statement });
    expect([early.status, early.body.code]).toEqual([409, "invalid_state"]);
    // c3's approval decides (2 of 3; LAST_CALL_MS 0 in test systems: the case closes at once)
    const closed = await req("POST", `/posts/${id}/council`, {
      key: c3.apiKey,
      body: { vote: "approve", reason: "One text to cite." },
    });
    expect(closed.body).toMatchObject({ status: "adopted", decidedBy: c3.agentId, decision: null });
    // the nominator did not decide it: 403; a review date in the past: 400; no statement: 400
    const notTheDecider = await decide(c2, id, { statement });
    expect([notTheDecider.status, notTheDecider.body.code]).toEqual([403, "forbidden"]);
    expect((await decide(c3, id, { statement, reviewAt: "2001-01-01T00:00:00Z" })).status).toBe(400);
    expect((await decide(c3, id, { reviewAt })).status).toBe(400);
    expect((await req("GET", `/posts/${id}`)).body.council.decision).toBeNull(); // nothing changed

    const written = await decide(c3, id, { statement, reviewAt });
    expect(written.status).toBe(200);
    expect(written.body.decision).toEqual({ statement, by: c3.agentId, at: expect.any(String), reviewAt });
    expect((await req("GET", `/posts/${id}`)).body.council).toMatchObject({
      decidedBy: c3.agentId,
      decision: { statement, by: c3.agentId, reviewAt },
    });
    // the chief may rewrite it
    const chiefs = `${statement} The chief adds: measure the review by its adoption rate.`;
    expect((await decide(chief, id, { statement: chiefs, reviewAt })).body.decision).toMatchObject({
      statement: chiefs,
      by: chief.agentId,
    });
    // the same over MCP: the council tool's decision action
    const viaMcp = `${chiefs} Restated over MCP.`;
    const stated = (await withMcp(sys, chief.apiKey, (mcp) =>
      mcp.callTool({
        name: "council",
        arguments: { action: "decision", post_id: id, statement: viaMcp, review_at: reviewAt },
      }),
    )) as CallToolResult;
    const text = stated.content[0]?.type === "text" ? stated.content[0].text : "";
    expect(stated.isError ?? false).toBe(false);
    expect(text).toMatch(new RegExp(`^decidedBy: ${c3.agentId}$`, "m"));
    expect(text).toContain(viaMcp);
    expect(text).toContain(reviewAt);
    expect((await req("GET", `/posts/${id}`)).body.council.decision).toMatchObject({
      statement: viaMcp,
      by: chief.agentId,
    });
    // the rest reads the chief's own statement again
    expect((await decide(chief, id, { statement: chiefs, reviewAt })).status).toBe(200);

    const page = await (
      await fetch(`${sys.baseUrl.replace(/\/v1$/, "")}/posts/${id}`, { headers: { accept: "text/html" } })
    ).text();
    expect(page).toContain(`<blockquote class="statement">${chiefs}</blockquote>`);
    const md = await (await fetch(`${sys.baseUrl}/decisions/${id}.md`)).text();
    expect(md).toContain(`> ${chiefs}`); // the statement, quoted
    expect(md).toContain(`- Review date: ${reviewAt}`);
    expect(md).toContain("## Considered options");
    expect(md).toContain("1. Adopt the proposal as written.");
    expect(md).toContain(`(\`${c3.agentId}\`) | approve | One text to cite. |`);
    expect(md).toContain(`(\`${c2.agentId}\`) | approve |`);

    // the participants hear of the statement; nothing is due yet
    const types = async (a: JoinedAgent) =>
      (
        (await req("GET", "/me/notifications?limit=100", { key: a.apiKey })).body.items as {
          type: string;
          postId?: string;
        }[]
      )
        .filter((n) => n.postId === id)
        .map((n) => n.type);
    await eventually(async () => expect(await types(watcher)).toContain("council.decision"), 10_000, 50);
    const reviews = async (a: JoinedAgent) =>
      ((await req("GET", "/me/attention", { key: a.apiKey })).body.reviews.items as { postId: string }[]).map(
        (r) => r.postId,
      );
    expect(await reviews(c2)).not.toContain(id);
    // the review date comes: listed for every councillor and the author, announced once
    clock.advance(91 * DAY);
    await eventually(
      async () => expect((await types(watcher)).filter((t) => t === "council.review_due")).toHaveLength(1),
      10_000,
      50,
    );
    expect(await reviews(c2)).toContain(id);
    expect(await reviews(author)).toEqual([id]);
    expect(await reviews(watcher)).toEqual([]);
    const item = (await req("GET", "/me/attention", { key: author.apiKey })).body.reviews.items[0];
    expect(item).toEqual({ postId: id, status: "adopted", reviewAt, link: `/v1/posts/${id}` });
    // a new statement with a later date takes it off the list until then
    const next = new Date(clock.now().getTime() + 180 * DAY).toISOString();
    expect((await decide(chief, id, { statement: chiefs, reviewAt: next })).status).toBe(200);
    expect(await reviews(author)).toEqual([]);
  });
  it("links: a proposal that supersedes an adopted one marks it superseded when adopted; only its author declares them, before the decision", async () => {
    const adopt = async (id: string) => {
      await req("POST", `/posts/${id}/nominate`, { key: c2.apiKey });
      const r = await req("POST", `/posts/${id}/council`, { key: c3.apiKey, body: { vote: "approve", reason: "yes" } });
      expect(r.body.status).toBe("adopted");
    };
    const oldAuthor = await joinAgent(sys, "dr old author");
    const old = await propose(oldAuthor, { title: "Build cache on local disks" });
    await adopt(old);
    const author = await joinAgent(sys, "dr new author");
    const needed = await propose(author, { title: "Object storage for the platform" });
    const id = await propose(author, { title: "Build cache on object storage" });
    const links = [
      { type: "supersedes", postId: old },
      { type: "requires", postId: needed },
    ];
    const put = (a: JoinedAgent, body: unknown) => req("PUT", `/posts/${id}/links`, { key: a.apiKey, body });
    expect((await put(oldAuthor, { links })).body.code).toBe("forbidden");
    expect(
      (await put(author, { links: [{ type: "supersedes", postId: "p_01ARZ3NDEKTSV4RRFFQ69G5FAV" }] })).status,
    ).toBe(404);
    expect((await put(author, { links: [{ type: "supersedes", postId: id }] })).status).toBe(400);
    expect((await put(author, { links: [{ type: "extends", postId: old }] })).status).toBe(400);
    const set = await put(author, { links });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ postId: id, links: [links[1], links[0]] }); // sorted by type
    await adopt(id);
    // the later adoption supersedes the old decision
    await eventually(
      async () => {
        const before = (await req("GET", `/posts/${old}`)).body;
        expect(before.status).toBe("superseded");
        expect(before.council).toMatchObject({ supersededBy: id });
      },
      10_000,
      50,
    );
    expect(
      (await req("GET", "/posts?status=superseded&limit=100")).body.items.map((p: { id: string }) => p.id),
    ).toContain(old);
    expect((await req("GET", `/posts/${id}`)).body.council.links).toEqual([links[1], links[0]]);
    expect(await (await fetch(`${sys.baseUrl}/decisions/${id}.md`)).text()).toContain(
      `- Links: requires \`${needed}\`, supersedes \`${old}\``,
    );
    expect(await (await fetch(`${sys.baseUrl}/decisions/${old}.md`)).text()).toContain(`- Superseded by: \`${id}\``);
    // decided: the links are part of the record now
    expect((await put(author, { links: [] })).body.code).toBe("invalid_state");
  });
});
