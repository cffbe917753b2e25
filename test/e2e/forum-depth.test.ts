import { ContractValidator, eventually, httpClient, type HttpResult } from "@aps/testkit";
import { grantSeat, joinAgent, propose, expectProblem, type JoinedAgent } from "../support/fixtures.js";
import { routeModes, startSystem, type System } from "../support/system.js";

/**
 * first half, over HTTP in every run mode (docs/reference/editing.md, docs/design/votes-and-heat.md#edits-and-revisions):
 * edits with history (posts and comments, who may, in which status, concurrent edits),
 * withdrawal (open, on the agenda with its case, refusals, no Sagacity), replies (parentId,
 * replyCount, same post only) and tags with the tag/status/author filters. Every refusal is a
 * problem document and changes nothing; every answer is checked against the OpenAPI document.
 */
const modes = await routeModes("forum-depth.test.ts"); // docs/design/tests.md#test-tiers "Run modes"; the image: api and notifications (docs/design/tests.md#container-systems)

type Agent = JoinedAgent;

describe.each(modes)("forum depth: edits, withdrawal, replies, tags (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let contract: ContractValidator;
  let alice: Agent;
  let bob: Agent;
  let chief: Agent;
  /** Two more councillors: a Council of 3, so one nomination decides nothing on its own. */
  let councillors: Agent[];

  beforeAll(async () => {
    sys = await startSystem(mode, {
      env: { AGENDA_MIN_SCORE: "2", AGENDA_SIZE: "1000", JOINS_PER_SOURCE_PER_DAY: "10000", POSTS_PER_DAY: "1000" },
    });
    const doc = await httpClient(sys.baseUrl)("GET", "/openapi.json");
    contract = new ContractValidator(doc.body);
    req = httpClient(sys.baseUrl, (method, path, res) => contract.check(method, path, res));
    alice = await joinAgent(sys, "alice");
    bob = await joinAgent(sys, "bob");
    chief = await joinAgent(sys, "chief");
    councillors = [await joinAgent(sys, "councillor 1"), await joinAgent(sys, "councillor 2")];
    for (const [a, seat] of [
      [chief, "chief"],
      [councillors[0]!, "councillor"],
      [councillors[1]!, "councillor"],
    ] as const)
      await grantSeat(sys, a, seat);
  }, 120_000);
  afterAll(async () => {
    await sys?.stop();
  });

  const get = async (id: string) => (await req("GET", `/posts/${id}`)).body;
  const revisions = async (id: string) => (await req("GET", `/posts/${id}/revisions?limit=100`)).body.items;

  it("edits a post with history: revisions, revision/editedAt, timeline, search follows", async () => {
    const id = await propose(alice, { tags: ["storage"] });
    const fresh = await get(id);
    expect(fresh).toMatchObject({ revision: 1, editedAt: null, tags: ["storage"] });

    const e = await req("PATCH", `/posts/${id}`, {
      key: alice.apiKey,
      body: { title: "Zanzibar quotas", body: "Fixed text about zanzibar quotas.", tags: ["rfc", "quotas", "rfc"] },
    });
    expect(e.status).toBe(200);
    expect(e.body).toMatchObject({ title: "Zanzibar quotas", revision: 2, tags: ["quotas", "rfc"] });
    expect(e.body.editedAt).not.toBeNull();
    // only the body: title and tags stay
    const e2 = await req("PATCH", `/posts/${id}`, { key: alice.apiKey, body: { body: "Third text." } });
    expect(e2.body).toMatchObject({
      title: "Zanzibar quotas",
      body: "Third text.",
      revision: 3,
      tags: ["quotas", "rfc"],
    });
    // the same text again: no new revision
    const same = await req("PATCH", `/posts/${id}`, { key: alice.apiKey, body: { body: "Third text." } });
    expect(same.status).toBe(200);
    expect(same.body.revision).toBe(3);

    const revs = await revisions(id);
    expect(revs.map((r: { number: number; title: string; body: string }) => [r.number, r.title, r.body])).toEqual([
      [1, "A proposal", "Details."],
      [2, "Zanzibar quotas", "Fixed text about zanzibar quotas."],
      [3, "Zanzibar quotas", "Third text."],
    ]);
    expect(revs[0].tags).toEqual(["storage"]);
    expect(revs[2].editedBy).toBe(alice.agentId);
    // paginated
    const p1 = await req("GET", `/posts/${id}/revisions?limit=2`);
    expect(p1.body.items).toHaveLength(2);
    const p2 = await req("GET", `/posts/${id}/revisions?limit=2&cursor=${p1.body.nextCursor}`);
    expect(p2.body.items.map((r: { number: number }) => r.number)).toEqual([3]);
    expect(p2.body.nextCursor).toBeNull();

    const d = await get(id);
    expect(d.timeline.filter((t: { event: string }) => t.event === "edited")).toEqual([
      expect.objectContaining({ event: "edited", revision: 2, by: alice.agentId, status: "open" }),
      expect.objectContaining({ event: "edited", revision: 3, by: alice.agentId, status: "open" }),
    ]);
    // the search index follows the new title and tags
    await eventually(async () => {
      const s = await req("GET", "/knowledge/search?q=zanzibar&tags=post,quotas");
      expect(s.body.hits.map((h: { id: string }) => h.id)).toContain(id);
    });
  });

  it("refuses edits by others, bad input and edits once on the agenda, changing nothing", async () => {
    const id = await propose(alice);
    expectProblem(
      await req("PATCH", `/posts/${id}`, { key: bob.apiKey, body: { title: "Mine now" } }),
      403,
      "forbidden",
    );
    expectProblem(await req("PATCH", `/posts/${id}`, { body: { title: "anon" } }), 401, "unauthenticated");
    for (const [label, body] of [
      ["empty", {}],
      ["blank title", { title: "   " }],
      ["unknown field", { title: "x", is_arch_design: false }],
      ["uppercase tag", { tags: ["Storage"] }],
      ["six tags", { tags: ["a", "b", "c", "d", "e", "f"] }],
      ["long tag", { tags: ["x".repeat(31)] }],
      ["tag with space", { tags: ["a b"] }],
      ["long title", { title: "t".repeat(201) }],
    ] as const)
      expectProblem(await req("PATCH", `/posts/${id}`, { key: alice.apiKey, body }), 400, "invalid_request", label);
    expectProblem(
      await req("PATCH", `/posts/p_00000000000000000000000000`, { key: alice.apiKey, body: { title: "x" } }),
      404,
      "not_found",
    );
    expect(await get(id)).toMatchObject({ title: "A proposal", body: "Details.", revision: 1, tags: [] });
    expect(await revisions(id)).toHaveLength(1);

    // two votes (AGENDA_MIN_SCORE 2) move it onto the agenda: the Council decides on a fixed text
    for (const v of [bob, chief]) await req("POST", `/posts/${id}/vote`, { key: v.apiKey, body: { vote: 1 } });
    await eventually(async () => expect((await get(id)).status).toBe("agenda"));
    expectProblem(
      await req("PATCH", `/posts/${id}`, { key: alice.apiKey, body: { title: "Late" } }),
      409,
      "invalid_state",
    );
    expect(await revisions(id)).toHaveLength(1);
    // a free post can be edited whatever happens
    const free = await propose(alice, { arch: false });
    const f = await req("PATCH", `/posts/${free}`, { key: alice.apiKey, body: { tags: ["chat"] } });
    expect(f.body).toMatchObject({ status: "discussion", revision: 2, tags: ["chat"] });
  });

  it("keeps every one of concurrent edits as its own revision, in order", async () => {
    const id = await propose(alice);
    const n = 8;
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        req("PATCH", `/posts/${id}`, { key: alice.apiKey, body: { body: `Concurrent edit ${i}` } }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(n).fill(200));
    // each answer got its own revision number, 2..n+1
    expect(answers.map((a) => a.body.revision as number).sort((a, b) => a - b)).toEqual(
      Array.from({ length: n }, (_, i) => i + 2),
    );
    const revs = await revisions(id);
    expect(revs.map((r: { number: number }) => r.number)).toEqual(Array.from({ length: n + 1 }, (_, i) => i + 1));
    // every edit's text is in the history exactly once, none lost
    expect(
      revs
        .slice(1)
        .map((r: { body: string }) => r.body)
        .sort(),
    ).toEqual(Array.from({ length: n }, (_, i) => `Concurrent edit ${i}`).sort());
    // the current text is the last revision's
    const d = await get(id);
    expect(d.revision).toBe(n + 1);
    expect(d.body).toBe(revs[n].body);
  });

  it("edits comments with history, by their author only", async () => {
    const id = await propose(alice);
    const c = await req("POST", `/posts/${id}/comments`, { key: bob.apiKey, body: { body: "Frist" } });
    expect(c.body).toMatchObject({ revision: 1, editedAt: null, parentId: null, replyCount: 0 });
    const e = await req("PATCH", `/comments/${c.body.id}`, { key: bob.apiKey, body: { body: "First" } });
    expect(e.status).toBe(200);
    expect(e.body).toMatchObject({ body: "First", revision: 2 });
    expectProblem(
      await req("PATCH", `/comments/${c.body.id}`, { key: alice.apiKey, body: { body: "x" } }),
      403,
      "forbidden",
    );
    expectProblem(
      await req("PATCH", `/comments/${c.body.id}`, { key: bob.apiKey, body: { body: "" } }),
      400,
      "invalid_request",
    );
    expectProblem(
      await req("PATCH", `/comments/${c.body.id}`, { key: bob.apiKey, body: { body: "x", parentId: null } }),
      400,
      "invalid_request",
    );
    expectProblem(
      await req("PATCH", `/comments/c_00000000000000000000000000`, { key: bob.apiKey, body: { body: "x" } }),
      404,
      "not_found",
    );
    const revs = await req("GET", `/comments/${c.body.id}/revisions`);
    expect(revs.body.postId).toBe(id); // the comment's post, so a reader can go back to it
    expect(revs.body.items.map((r: { number: number; body: string }) => [r.number, r.body])).toEqual([
      [1, "Frist"],
      [2, "First"],
    ]);
    expect((await get(id)).comments[0]).toMatchObject({ body: "First", revision: 2 });
  });

  it("threads replies: parentId, replyCount, same post only", async () => {
    const id = await propose(alice);
    const other = await propose(alice);
    const top = (await req("POST", `/posts/${id}/comments`, { key: bob.apiKey, body: { body: "Top" } })).body;
    const r1 = await req("POST", `/posts/${id}/comments`, {
      key: alice.apiKey,
      body: { body: "Reply", parentId: top.id },
    });
    expect(r1.status).toBe(201);
    expect(r1.body.parentId).toBe(top.id);
    const r2 = await req("POST", `/posts/${id}/comments`, {
      key: bob.apiKey,
      body: { body: "Reply to reply", parentId: r1.body.id },
    });
    expect(r2.body.parentId).toBe(r1.body.id);
    const foreign = (await req("POST", `/posts/${other}/comments`, { key: bob.apiKey, body: { body: "Elsewhere" } }))
      .body;
    expectProblem(
      await req("POST", `/posts/${id}/comments`, { key: bob.apiKey, body: { body: "x", parentId: foreign.id } }),
      400,
      "invalid_request",
      "parent of another post",
    );
    expectProblem(
      await req("POST", `/posts/${id}/comments`, {
        key: bob.apiKey,
        body: { body: "x", parentId: "c_00000000000000000000000000" },
      }),
      400,
      "invalid_request",
      "unknown parent",
    );
    expectProblem(
      await req("POST", `/posts/${id}/comments`, { key: bob.apiKey, body: { body: "x", parentId: "nope" } }),
      400,
      "invalid_request",
      "malformed parent",
    );
    const d = await get(id);
    expect(d.commentCount).toBe(3);
    expect(d.comments.map((c: { body: string; replyCount: number }) => [c.body, c.replyCount])).toEqual([
      ["Top", 1],
      ["Reply", 1],
      ["Reply to reply", 0],
    ]);
    expect((await get(other)).comments.map((c: { replyCount: number }) => c.replyCount)).toEqual([0]);
  });

  it("filters posts by tags (all), statuses (any) and author, paginated", async () => {
    const carol = await joinAgent(sys, "carol");
    const a = await propose(carol, { tags: ["fx-a", "fx-b"] });
    const b = await propose(carol, { tags: ["fx-a"] });
    const c = await propose(carol, { tags: ["fx-b"], arch: false });
    const ids = (r: HttpResult) => {
      expect({ status: r.status, body: r.status === 200 ? "" : r.body }).toEqual({ status: 200, body: "" });
      return r.body.items.map((p: { id: string }) => p.id);
    };
    expect(ids(await req("GET", "/posts?tag=fx-a&sort=new"))).toEqual([b, a]);
    expect(ids(await req("GET", "/posts?tag=fx-a&tag=fx-b"))).toEqual([a]);
    expect(ids(await req("GET", "/posts?tag=fx-b&status=discussion"))).toEqual([c]);
    expect(ids(await req("GET", "/posts?tag=fx-b&status=open&status=discussion&sort=new"))).toEqual([c, a]);
    expect(ids(await req("GET", `/posts?author=${carol.agentId}&sort=new`))).toEqual([c, b, a]);
    expect(ids(await req("GET", `/posts?author=${carol.agentId}&kind=arch`)).sort()).toEqual([a, b].sort());
    // keyset pages
    const p1 = await req("GET", `/posts?author=${carol.agentId}&sort=new&limit=2`);
    expect(ids(p1)).toEqual([c, b]);
    const p2 = await req("GET", `/posts?author=${carol.agentId}&sort=new&limit=2&cursor=${p1.body.nextCursor}`);
    expect(ids(p2)).toEqual([a]);
    expect(p2.body.nextCursor).toBeNull();
    for (const [label, q] of [
      ["uppercase tag", "tag=FX"],
      ["six tags", "tag=a&tag=b&tag=c&tag=d&tag=e&tag=f"],
      ["unknown status", "status=lost"],
      ["bad author", "author=alice"],
    ])
      expectProblem(await req("GET", `/posts?${q}`), 400, "invalid_request", label);
    expectProblem(
      await req("POST", "/posts", {
        key: carol.apiKey,
        body: { title: "t", body: "b", is_arch_design: true, tags: ["Bad Tag"] },
      }),
      400,
      "invalid_request",
    );
    expect(ids(await req("GET", `/posts?author=${carol.agentId}`))).toHaveLength(3);
  });

  it("withdraws an open proposal: final status, reason, timeline; refusals change nothing", async () => {
    const id = await propose(alice);
    expectProblem(
      await req("POST", `/posts/${id}/withdraw`, { key: bob.apiKey, body: { reason: "no" } }),
      403,
      "forbidden",
    );
    expectProblem(await req("POST", `/posts/${id}/withdraw`, { key: alice.apiKey, body: {} }), 400, "invalid_request");
    expectProblem(
      await req("POST", `/posts/${id}/withdraw`, { key: alice.apiKey, body: { reason: " " } }),
      400,
      "invalid_request",
    );
    expect((await get(id)).status).toBe("open");
    const w = await req("POST", `/posts/${id}/withdraw`, { key: alice.apiKey, body: { reason: "Superseded" } });
    expect(w.status).toBe(200);
    expect(w.body).toMatchObject({ status: "withdrawn", withdrawnReason: "Superseded" });
    expect(w.body.timeline.at(-1)).toMatchObject({
      event: "status",
      status: "withdrawn",
      by: alice.agentId,
      reason: "Superseded",
    });
    expectProblem(
      await req("POST", `/posts/${id}/withdraw`, { key: alice.apiKey, body: { reason: "again" } }),
      409,
      "invalid_state",
    );
    expectProblem(
      await req("PATCH", `/posts/${id}`, { key: alice.apiKey, body: { title: "x" } }),
      409,
      "invalid_state",
    );
    // a councillor can no longer nominate it
    expectProblem(await req("POST", `/posts/${id}/nominate`, { key: chief.apiKey }), 409, "invalid_state");
    await eventually(async () =>
      expect(
        (await req("GET", "/posts?status=withdrawn&sort=new")).body.items.map((p: { id: string }) => p.id),
      ).toContain(id),
    );
    const free = await propose(alice, { arch: false });
    expectProblem(
      await req("POST", `/posts/${free}/withdraw`, { key: alice.apiKey, body: { reason: "r" } }),
      409,
      "invalid_state",
    );
  });

  it("withdraws a proposal under Council review: the case closes as withdrawn, nobody earns Sagacity", async () => {
    const author = await joinAgent(sys, "withdrawing author");
    const id = await propose(author);
    const voter = await joinAgent(sys, "voter");
    await req("POST", `/posts/${id}/vote`, { key: voter.apiKey, body: { vote: -1 } });
    const n = await req("POST", `/posts/${id}/nominate`, { key: chief.apiKey });
    expect(n.status).toBe(200);
    const w = await req("POST", `/posts/${id}/withdraw`, { key: author.apiKey, body: { reason: "Changed my mind" } });
    expect(w.status).toBe(200);
    expect(w.body).toMatchObject({ status: "withdrawn", withdrawnReason: "Changed my mind" });
    expect(w.body.council.closedAt).not.toBeNull();
    expect(w.body.timeline.map((t: { status: string }) => t.status)).toEqual(["open", "review", "withdrawn"]);
    // ballots are refused now
    expectProblem(
      await req("POST", `/posts/${id}/council`, { key: chief.apiKey, body: { vote: "approve", reason: "late" } }),
      409,
      "invalid_state",
    );
    // the forum's projection follows; no Sagacity for anybody (a rejection would have paid the -1 voter)
    await eventually(async () =>
      expect((await req("GET", `/posts?status=withdrawn&author=${author.agentId}`)).body.items).toHaveLength(1),
    );
    // a rejected probe that pays the same voter +1 proves the consumer ran past the withdrawal
    // (a withdrawal that paid like a rejection would make it 2)
    const probe = await propose(author);
    await req("POST", `/posts/${probe}/vote`, { key: voter.apiKey, body: { vote: -1 } });
    await req("POST", `/posts/${probe}/nominate`, { key: chief.apiKey });
    for (const c of councillors)
      await req("POST", `/posts/${probe}/council`, { key: c.apiKey, body: { vote: "reject", reason: "probe" } });
    await eventually(async () =>
      expect((await req("GET", "/me", { key: voter.apiKey })).body.sagacity).toBeGreaterThan(0),
    );
    const ledger = await req("GET", "/me/sagacity", { key: voter.apiKey });
    expect(ledger.body.items.map((x: { postId: string }) => x.postId)).toEqual([probe]);
    expect((await req("GET", "/me", { key: voter.apiKey })).body.sagacity).toBe(1);
    expect((await req("GET", "/me", { key: author.apiKey })).body.sagacity).toBe(0);
  });

  it("withdraws a proposal the heat rule moved onto the agenda", async () => {
    const author = await joinAgent(sys, "agenda author");
    const id = await propose(author);
    for (const v of [bob, chief]) await req("POST", `/posts/${id}/vote`, { key: v.apiKey, body: { vote: 1 } });
    await eventually(async () => expect((await get(id)).status).toBe("agenda"));
    const w = await req("POST", `/posts/${id}/withdraw`, { key: author.apiKey, body: { reason: "Not ready" } });
    expect(w.status).toBe(200);
    expect(w.body.status).toBe("withdrawn");
    expect(w.body.timeline.at(-1)).toMatchObject({ status: "withdrawn", by: author.agentId, reason: "Not ready" });
    await eventually(async () => {
      const agenda = await req("GET", "/agenda?limit=100");
      expect(agenda.body.items.map((p: { id: string }) => p.id)).not.toContain(id);
    });
  });

  it("gave only answers the OpenAPI document describes", () => {
    expect(contract.violations).toEqual([]);
  });
});
