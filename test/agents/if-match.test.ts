import { httpClient } from "@aps/testkit";
import { expectProblem, expectStatus, joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { startSystem, type System } from "../support/system.js";

/**
 * Edits that name the revision they were made from (docs/reference/editing.md "Edit a post"):
 * `PATCH /posts/{id}` and `PATCH /comments/{id}` with `If-Match: "<revision>"` apply only to that
 * revision; another current one is 412 `precondition_failed` naming it, and nothing changes (no
 * revision, no timeline entry, the text as it was). Without `If-Match`, or with `*`, the last edit
 * wins as before. Gateway and forum rules: one embedded system.
 */
describe("If-Match on edits (embedded)", () => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let ann: JoinedAgent;

  beforeAll(async () => {
    sys = await startSystem("embedded", { env: { JOINS_PER_SOURCE_PER_DAY: "1000" } });
    req = httpClient(sys.baseUrl);
    ann = await joinAgent(sys, "ann");
  });
  afterAll(async () => {
    await sys?.stop();
  });

  type Post = { revision: number; title: string; timeline: { event: string }[] };
  const read = async (id: string) => expectStatus<Post>(await req("GET", `/posts/${id}`), 200, "GET post");
  const patch = (path: string, body: object, ifMatch?: string) =>
    req("PATCH", path, {
      key: ann.apiKey,
      body,
      ...(ifMatch !== undefined ? { headers: { "if-match": ifMatch } } : {}),
    });

  it("a post: the revision read applies, a stale one is 412 naming the current one and changes nothing", async () => {
    const id = await propose(ann, { title: "Cache the hot list", arch: false });
    expect((await read(id)).revision).toBe(1);

    const first = expectStatus(
      await patch(`/posts/${id}`, { title: "Cache the hot list (v2)" }, '"1"'),
      200,
      "If-Match 1",
    );
    expect(first).toMatchObject({ revision: 2, title: "Cache the hot list (v2)" });

    // a second writer who read revision 1 too
    const stale = await patch(`/posts/${id}`, { title: "Something else" }, '"1"');
    expectProblem(stale, 412, "precondition_failed", "If-Match 1 on revision 2");
    expect((stale.body as { detail: string }).detail).toMatch(/revision 2, not 1/);
    const after = await read(id);
    expect(after).toMatchObject({ revision: 2, title: "Cache the hot list (v2)" });
    expect(after.timeline.filter((e) => e.event === "edited")).toHaveLength(1);
    const revisions = expectStatus<{ items: unknown[] }>(await req("GET", `/posts/${id}/revisions`), 200, "revisions");
    expect(revisions.items).toHaveLength(2);

    // `*` and no header: the last edit wins
    expect(expectStatus(await patch(`/posts/${id}`, { title: "Star" }, "*"), 200, "If-Match *")).toMatchObject({
      revision: 3,
    });
    expect(expectStatus(await patch(`/posts/${id}`, { title: "None" }), 200, "no If-Match")).toMatchObject({
      revision: 4,
    });
  });

  it("an If-Match that is not a quoted revision is 400 and changes nothing, whatever it names", async () => {
    const id = await propose(ann, { title: "Shard the votes", arch: false });
    const etag = (await req("GET", `/posts/${id}`)).headers.get("etag");
    expect(etag).toBeTruthy();
    for (const bad of ['W/"1"', "1", '"1", "2"', etag!]) {
      const r = await patch(`/posts/${id}`, { title: "Changed" }, bad);
      expectProblem(r, 400, "invalid_request", `If-Match ${bad}`);
      expect((r.body as { detail: string }).detail).toMatch(/If-Match/);
    }
    expect(await read(id)).toMatchObject({ revision: 1, title: "Shard the votes" });
  });

  it("a comment: the same rule", async () => {
    const postId = await propose(ann, { title: "Comment on me", arch: false });
    const c = expectStatus<{ id: string; revision: number }>(
      await req("POST", `/posts/${postId}/comments`, { key: ann.apiKey, body: { body: "first text" } }),
      201,
      "comment",
    );
    expect(c.revision).toBe(1);
    expectProblem(
      await patch(`/comments/${c.id}`, { body: "from a future" }, '"2"'),
      412,
      "precondition_failed",
      "If-Match 2 on 1",
    );
    const edited = expectStatus(await patch(`/comments/${c.id}`, { body: "second text" }, '"1"'), 200, "If-Match 1");
    expect(edited).toMatchObject({ revision: 2, body: "second text" });
    expectProblem(
      await patch(`/comments/${c.id}`, { body: "third text" }, '"1"'),
      412,
      "precondition_failed",
      "If-Match 1 on 2",
    );
    const revisions = expectStatus<{ items: { body: string }[] }>(
      await req("GET", `/comments/${c.id}/revisions`),
      200,
      "comment revisions",
    );
    expect(revisions.items.map((r) => r.body)).toEqual(["first text", "second text"]);
  });
});
