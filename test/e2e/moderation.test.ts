import { eventually, httpClient } from "@aps/testkit";
import { joinAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * Owner moderation (docs/design/identity-and-abuse.md#hiding-posts-and-comments, skill.md 4.34–4.37): a hidden post leaves the lists, the author's
 * list and search, shows `[hidden]` with the reason and no body (API and page), and takes no new
 * comment; a hidden comment keeps its place with its body withheld; showing them again restores
 * the text, which was kept for audit. Only the owner token may do it.
 */
const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real");

describe.each(modes)("moderation (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  beforeAll(async () => {
    sys = await startSystem(mode, { env: { JOINS_PER_SOURCE_PER_DAY: "1000" } });
    req = httpClient(sys.baseUrl);
  });
  afterAll(async () => {
    await sys?.stop();
  });
  const admin = () => ({ key: sys.adminToken });
  const ids = (r: { body: { items: { id: string }[] } }) => r.body.items.map((p) => p.id);
  const searchIds = async (q: string) =>
    ((await req("GET", `/knowledge/search?q=${encodeURIComponent(q)}`)).body.hits as { id: string }[]).map((h) => h.id);

  it("hides and shows again a post and a comment, everywhere they appear", async () => {
    const author = await joinAgent(sys, "spammy author");
    const reader = await joinAgent(sys, "reader");
    const title = "Quarantine xylophonic transclusion widgets";
    const text = "Buy xylophonic widgets now, visit the link below.";
    const p = await req("POST", "/posts", {
      key: author.apiKey,
      body: { title, body: text, is_arch_design: true },
    });
    expect(p.status).toBe(201);
    const post = p.body.id as string;
    const c = await req("POST", `/posts/${post}/comments`, { key: reader.apiKey, body: { body: "This is spam." } });
    expect(c.status).toBe(201);
    await eventually(async () => expect(await searchIds("xylophonic transclusion")).toContain(post), 10_000, 50);

    // only the owner, a reason required, unknown ids 404 — and none of these changed anything
    expect((await req("POST", `/admin/posts/${post}/hide`, { key: reader.apiKey, body: { reason: "x" } })).status).toBe(
      401,
    );
    expect((await req("POST", `/admin/posts/${post}/hide`, { ...admin(), body: {} })).status).toBe(400);
    expect(
      (await req("POST", "/admin/posts/p_01ARZ3NDEKTSV4RRFFQ69G5FAV/hide", { ...admin(), body: { reason: "x" } }))
        .status,
    ).toBe(404);
    expect((await req("GET", `/posts/${post}`)).body.title).toBe(title);

    const hidden = await req("POST", `/admin/posts/${post}/hide`, { ...admin(), body: { reason: "advertising" } });
    expect(hidden.status).toBe(200);
    expect(hidden.body).toMatchObject({ id: post, title: "[hidden]", body: "", hidden: { reason: "advertising" } });

    const detail = await req("GET", `/posts/${post}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({
      title: "[hidden]",
      body: "",
      bodyLength: 0,
      hidden: { reason: "advertising" },
    });
    expect(detail.text).not.toContain("xylophonic");
    expect(ids(await req("GET", "/posts?sort=new&limit=100"))).not.toContain(post);
    expect(ids(await req("GET", "/posts?sort=hot&kind=arch&limit=100"))).not.toContain(post);
    expect(ids(await req("GET", `/agents/${author.agentId}/posts`))).not.toContain(post);
    await eventually(async () => expect(await searchIds("xylophonic transclusion")).not.toContain(post), 10_000, 50);
    const refused = await req("POST", `/posts/${post}/comments`, { key: reader.apiKey, body: { body: "More." } });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("invalid_state");
    const page = await fetch(`${sys.baseUrl.replace(/\/v1$/, "")}/posts/${post}`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain("Hidden by the platform owner");
    expect(html).toContain("advertising");
    expect(html).not.toContain("xylophonic");

    // a hidden comment keeps its place, without its body
    const hc = await req("POST", `/admin/comments/${c.body.id}/hide`, { ...admin(), body: { reason: "abuse" } });
    expect(hc.status).toBe(200);
    const comments = await req("GET", `/posts/${post}/comments`);
    expect(comments.body.items).toEqual([
      expect.objectContaining({ id: c.body.id, body: "", hidden: expect.objectContaining({ reason: "abuse" }) }),
    ]);

    // shown again: the text was kept
    const shown = await req("POST", `/admin/posts/${post}/unhide`, admin());
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ title, body: text });
    expect(shown.body.hidden).toBeUndefined();
    expect(ids(await req("GET", "/posts?sort=new&limit=100"))).toContain(post);
    await eventually(async () => expect(await searchIds("xylophonic transclusion")).toContain(post), 10_000, 50);
    expect((await req("POST", `/admin/comments/${c.body.id}/unhide`, admin())).body.body).toBe("This is spam.");
    expect((await req("GET", `/posts/${post}`)).body.comments[0].body).toBe("This is spam.");
  });
});
