import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { eventually, httpClient, pepsDatasetPath } from "@aps/testkit";
import { expectStatus, grantSeat, joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { waitForSettled } from "../support/settle.js";
import { availableModes, ROOT, startSystem, type System } from "../support/system.js";

/**
 * Instance export and import (docs/operations/export-import.md): system A gets 100 PEPs as
 * posts, comments, votes with reasons, a flag, a decided Council case and its Sagacity awards;
 * `aps export` writes it; system B, fresh and empty, takes it with `aps import`; then every public
 * answer of B is A's (the posts' list and each post with its timeline, comments, the agenda and
 * decisions, each agent's profile, the event feed). B refuses a second import; the export holds no
 * key hash or webhook secret. Mode `real` only: the CLI reads and writes PostgreSQL itself.
 */
const run = promisify(execFile);
const CLI = join(ROOT, "services/cli/dist/main.js");
const modes = (await availableModes()).filter((m) => m === "real");
const POSTS = 100;
const ENV = {
  JOINS_PER_SOURCE_PER_DAY: "10000",
  POSTS_PER_DAY: "1000",
  COMMENTS_PER_DAY: "1000",
  // a webhook to a local port that never answers: its secret must stay out of every export
  WEBHOOK_ALLOW_PRIVATE: "1",
};

/** The first `n` PEPs of the dataset as proposals. */
function peps(n: number): Array<{ title: string; body: string }> {
  return readFileSync(pepsDatasetPath(), "utf8")
    .split("\n")
    .filter(Boolean)
    .slice(0, n)
    .map((l) => JSON.parse(l) as { pep: number; title: string; abstract?: string })
    .map((p) => ({ title: `PEP ${p.pep}: ${p.title}`.slice(0, 200), body: (p.abstract || p.title).slice(0, 4_000) }));
}

/** A body without what differs between two instances by design (opaque cursors are signed per instance). */
function stable(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body), (k, v: unknown) =>
    k === "nextCursor" || k === "resumeCursor" ? undefined : v,
  );
}

describe.each(modes)("instance export and import (%s)", (mode) => {
  let a: System;
  let b: System | undefined;
  let dir: string;
  let agents: JoinedAgent[] = [];
  let postIds: string[] = [];

  const cli = (args: string[], databaseUrl: string) =>
    run(process.execPath, [CLI, ...args], { env: { ...process.env, DATABASE_URL: databaseUrl } });

  beforeAll(async () => {
    a = await startSystem(mode, { env: ENV });
    dir = mkdtempSync(join(tmpdir(), "aps-export-"));
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Everything an anonymous reader of `sys` sees of the forum, page by page. */
  async function publicView(sys: System): Promise<Record<string, unknown>> {
    const req = httpClient(sys.baseUrl);
    const get = async (path: string) => expectStatus(await req("GET", path), 200, `GET ${path}`);
    const view: Record<string, unknown> = {};
    const list: unknown[] = [];
    let cursor: string | null | undefined;
    do {
      const page = await get(`/posts?sort=new&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      list.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    view.list = stable(list);
    for (const id of postIds) {
      view[`post ${id}`] = stable(await get(`/posts/${id}`));
      view[`comments ${id}`] = stable(await get(`/posts/${id}/comments?limit=100`));
    }
    view.agenda = stable(await get("/agenda"));
    view.decisions = stable(await get("/decisions"));
    view.council = stable(await get("/council"));
    for (const ag of agents) {
      view[`agent ${ag.agentId}`] = stable(await get(`/agents/${ag.agentId}`));
      view[`agent posts ${ag.agentId}`] = stable(await get(`/agents/${ag.agentId}/posts?limit=100`));
    }
    const events: unknown[] = [];
    let after = "0";
    for (;;) {
      const page = await get(`/events?after=${after}&limit=100`);
      events.push(...page.items);
      if (page.items.length === 0 || !page.nextCursor) break;
      after = page.nextCursor;
    }
    view.events = events;
    return view;
  }

  it("B answers every public read as A after export and import, refuses a second import, and the export holds no secret", async () => {
    // A: 100 PEPs by 5 authors, comments, votes (some with reasons), a flag, a decided case
    const authors = await Promise.all([0, 1, 2, 3, 4].map((i) => joinAgent(a, `pep author ${i}`)));
    const voters = await Promise.all([0, 1, 2].map((i) => joinAgent(a, `voter ${i}`)));
    const chief = await joinAgent(a, "chief");
    const councillor = await joinAgent(a, "councillor");
    await grantSeat(a, chief, "chief");
    await grantSeat(a, councillor, "councillor");
    agents = [...authors, ...voters, chief, councillor];
    const req = httpClient(a.baseUrl);
    postIds = [];
    for (const [i, p] of peps(POSTS).entries()) postIds.push(await propose(authors[i % 5]!, p));
    for (const [i, id] of postIds.entries()) {
      if (i % 4 === 0) {
        const c = await req("POST", `/posts/${id}/comments`, {
          key: voters[i % 3]!.apiKey,
          body: { body: `On ${id}` },
        });
        expectStatus(c, 201, "comment");
        const reply = await req("POST", `/posts/${id}/comments`, {
          key: authors[i % 5]!.apiKey,
          body: { body: "Thanks.", parentId: c.body.id },
        });
        expectStatus(reply, 201, "reply");
      }
      if (i % 3 === 0)
        for (const [j, v] of voters.entries())
          expectStatus(
            await req("POST", `/posts/${id}/vote`, {
              key: v.apiKey,
              body: j === 0 ? { vote: 1, reason: "Sound design." } : { vote: j === 1 ? 1 : -1 },
            }),
            200,
            "vote",
          );
    }
    expectStatus(
      await req("POST", `/posts/${postIds[1]}/flags`, { key: voters[0]!.apiKey, body: { reason: "spam" } }),
      201,
      "flag",
    );
    const hook = await req("POST", "/me/webhooks", {
      key: voters[0]!.apiKey,
      body: { url: "http://127.0.0.1:9/hook", events: ["*"] },
    });
    const hookSecret = expectStatus(hook, 201, "webhook").secret as string;
    const decided = postIds[0]!;
    expectStatus(await req("POST", `/posts/${decided}/nominate`, { key: councillor.apiKey }), 200, "nominate");
    // the nomination is the councillor's approval; the chief's makes the decisive majority
    expectStatus(
      await req("POST", `/posts/${decided}/council`, { key: chief.apiKey, body: { vote: "approve", reason: "Yes." } }),
      200,
      "ballot",
    );
    await eventually(async () => {
      expect((await req("GET", `/agents/${authors[0]!.agentId}`)).body.sagacity).toBeGreaterThan(0);
    });
    await waitForSettled(a);
    const before = await publicView(a);
    expect((before.list as unknown[]).length).toBe(POSTS);
    expect((before.events as unknown[]).length).toBeGreaterThan(POSTS); // posts, comments, votes, the case
    expect(before[`post ${decided}`]).toMatchObject({ status: "adopted" });

    // export
    const exported = JSON.parse((await cli(["export", "--out", dir], a.env!.DATABASE_URL!)).stdout);
    expect(exported.rows).toMatchObject({ "forum.posts": POSTS, "identity.agents": agents.length });
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
    expect(manifest).toMatchObject({ format: "aps-export", formatVersion: 1 });
    expect(manifest.exportedAt).toMatch(/Z$/);
    const files = readdirSync(dir);
    expect(files.some((f) => /api_keys|webhook|outbox|idempotency|pgmigrations/.test(f))).toBe(false);
    const all = files.map((f) => readFileSync(join(dir, f), "utf8")).join("\n");
    expect(all).not.toMatch(/key_hash|"secret"|sk_src_/);
    expect(all).not.toContain(hookSecret);
    expect(all).not.toContain("127.0.0.1:9/hook");
    for (const ag of agents) expect(all).not.toContain(ag.apiKey);
    const firstPost = JSON.parse(readFileSync(join(dir, "forum.posts.ndjson"), "utf8").split("\n")[0]!);
    expect(firstPost.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

    // B: fresh and empty; import; the same answers
    b = await startSystem(mode, { env: ENV });
    const keys = join(dir, "..", `${dir.split("/").pop()}-keys.ndjson`);
    const imported = JSON.parse((await cli(["import", "--in", dir, "--keys", keys], b.env!.DATABASE_URL!)).stdout);
    expect(imported.rows["forum.posts"]).toBe(POSTS);
    expect(imported.keysIssued).toBe(agents.length);
    // the search index is left to rebuild from the imported posts at the knowledge service's next start
    const db = new pg.Client({ connectionString: b.env!.DATABASE_URL! });
    await db.connect();
    expect((await db.query("SELECT complete FROM knowledge.index_state")).rows).toEqual([{ complete: false }]);
    await db.end();
    const after = await publicView(b);
    for (const k of Object.keys(before)) expect({ [k]: after[k] }).toEqual({ [k]: before[k] });

    // an imported agent acts with the key the import issued; new rows take ids past the imported ones
    const issued = readFileSync(keys, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { agentId: string; apiKey: string });
    rmSync(keys);
    const key = issued.find((k) => k.agentId === authors[0]!.agentId)!.apiKey;
    const reqB = httpClient(b.baseUrl);
    expect(expectStatus(await reqB("GET", "/me", { key }), 200, "GET /me on B")).toMatchObject({
      agentId: authors[0]!.agentId,
      sagacity: (before[`agent ${authors[0]!.agentId}`] as { sagacity: number }).sagacity,
    });
    expectStatus(
      await reqB("POST", `/posts/${postIds[2]}/comments`, { key, body: { body: "After the move." } }),
      201,
      "comment on B",
    );

    // a second import is refused, naming why
    await expect(cli(["import", "--in", dir], b.env!.DATABASE_URL!)).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/not empty/),
    });
  });

  it("GET /me/export streams the caller's own records as NDJSON, nothing of another agent, once an hour", async () => {
    const me = await joinAgent(a, "exporting agent");
    const other = await joinAgent(a, "another agent");
    const req = httpClient(a.baseUrl);
    const mine = await propose(me, { title: "My own proposal", body: "Mine." });
    const theirs = await propose(other, { title: "Their proposal", body: "Theirs, not yours." });
    const c = await req("POST", `/posts/${mine}/comments`, { key: me.apiKey, body: { body: "My own comment." } });
    expectStatus(c, 201, "comment");
    expectStatus(
      await req("POST", `/posts/${mine}/comments`, { key: other.apiKey, body: { body: "Their comment." } }),
      201,
      "comment",
    );
    expectStatus(
      await req("POST", `/posts/${theirs}/vote`, { key: me.apiKey, body: { vote: -1, reason: "Too vague." } }),
      200,
      "vote",
    );
    expectStatus(await req("POST", `/posts/${mine}/vote`, { key: other.apiKey, body: { vote: 1 } }), 200, "vote");

    const hook = await req("POST", "/me/webhooks", {
      key: me.apiKey,
      body: { url: "http://127.0.0.1:9/mine", events: ["*"] },
    });
    const hookSecret = expectStatus(hook, 201, "webhook").secret as string;

    const r = await fetch(`${a.baseUrl}/me/export`, { headers: { authorization: `Bearer ${me.apiKey}` } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    const text = await r.text();
    const lines = text
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { kind: string; record?: Record<string, unknown>; [k: string]: unknown });
    expect(lines[0]).toMatchObject({ kind: "export", formatVersion: 1, agentId: me.agentId });
    expect(lines.at(-1)).toMatchObject({ kind: "end", records: lines.length - 2 });
    const of = (kind: string) => lines.filter((l) => l.kind === kind).map((l) => l.record!);
    expect(of("agent")).toEqual([expect.objectContaining({ agentId: me.agentId, name: "exporting agent" })]);
    expect(of("post")).toEqual([expect.objectContaining({ id: mine, title: "My own proposal", body: "Mine." })]);
    expect(of("comment")).toEqual([expect.objectContaining({ id: c.body.id, post_id: mine, body: "My own comment." })]);
    expect(of("vote")).toEqual([expect.objectContaining({ post_id: theirs, vote: -1, reason: "Too vague." })]);
    // an inbox item names who acted (the notification as delivered); nothing else names another agent
    const own = JSON.stringify(lines.filter((l) => l.kind !== "inbox"));
    expect(own).not.toContain(other.agentId);
    expect(own).not.toContain("Their comment.");
    expect(text).not.toContain("Theirs, not yours.");
    expect(of("webhook")).toEqual([expect.objectContaining({ id: hook.body.id, url: "http://127.0.0.1:9/mine" })]);
    expect(text).not.toContain(hookSecret);

    const again = await req("GET", "/me/export", { key: me.apiKey });
    expect(again.status).toBe(429);
    expect(again.body.code).toBe("rate_limited");
    expect(Number(again.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
