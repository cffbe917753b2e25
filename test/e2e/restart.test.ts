import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { httpClient } from "@aps/testkit";
import { joinAgent } from "../support/fixtures.js";
import { startSystem, type System } from "../support/system.js";

/**
 * Data survives a restart of the all-in-one (docs/design/services.md#two-ways-to-run "Data persists in APS_DATA_DIR across
 * restarts"): `npm start`'s entry point runs as a child process on a data folder, is stopped
 * gracefully with SIGTERM (exit code 0) and started again on the same folder; keys, posts,
 * comments and votes read back unchanged, and the restarted system keeps accepting writes.
 */
const TIMEOUT_MS = 240_000;

describe("all-in-one restart on the same data folder (aio-process)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "aps-restart-"));
  let sys: System | undefined;

  afterAll(async () => {
    await sys?.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }, TIMEOUT_MS);

  async function start(label: string): Promise<System> {
    const t0 = Date.now();
    const s = await startSystem("aio-process", { dataDir });
    console.log(`[restart.test] ${label}: start-to-ready ${Date.now() - t0} ms (aio-process, ${s.baseUrl})`);
    return s;
  }

  it(
    "keeps agents, keys, posts, comments and votes across a SIGTERM restart",
    async () => {
      sys = await start("first start (fresh data folder)");
      let req = httpClient(sys.baseUrl);

      const alice = await joinAgent(sys, "Alice before restart");
      const bob = await joinAgent(sys, "Bob before restart");
      const title = "Persist me: 持久化 ✓";
      const body = "## Why\nBecause restarts happen.\n\n  indented line\ttab\n";
      const post = await req("POST", "/posts", { key: alice.apiKey, body: { title, body, is_arch_design: true } });
      expect(post.status).toBe(201);
      const postId: string = post.body.id;
      const comment = await req("POST", `/posts/${postId}/comments`, {
        key: bob.apiKey,
        body: { body: "Still here after a restart?" },
      });
      expect(comment.status).toBe(201);
      const vote = await req("POST", `/posts/${postId}/vote`, { key: bob.apiKey, body: { vote: 1 } });
      expect(vote.status).toBe(200);
      const against = await req("POST", `/posts/${postId}/vote`, { key: alice.apiKey, body: { vote: -1 } });
      expect(against.status).toBe(200);

      const meBefore = await req("GET", "/me", { key: alice.apiKey });
      expect(meBefore.status).toBe(200);
      const bobBefore = await req("GET", "/me", { key: bob.apiKey });
      const detailBefore = await req("GET", `/posts/${postId}`, { key: bob.apiKey });
      expect(detailBefore.status).toBe(200);
      expect(detailBefore.body).toMatchObject({
        id: postId,
        title,
        body,
        author: { agentId: alice.agentId, name: "Alice before restart" },
        votes: { for: 1, against: 1, score: 0 },
        commentCount: 1,
        myVote: 1,
      });
      expect(detailBefore.body.comments).toHaveLength(1);
      expect(detailBefore.body.comments[0]).toMatchObject({
        id: comment.body.id,
        body: "Still here after a restart?",
        author: { agentId: bob.agentId },
      });
      const commentsBefore = await req("GET", `/posts/${postId}/comments`);
      const listBefore = await req("GET", "/posts?sort=new");

      // Graceful stop: SIGTERM, drain, exit 0; the old port no longer answers.
      const oldBase = sys.baseUrl;
      const code = await sys.process!.stop("SIGTERM");
      expect(code).toBe(0);
      sys = undefined;
      await expect(
        fetch(`${oldBase}/skill-version`).then(
          () => "up",
          () => "down",
        ),
      ).resolves.toBe("down");

      sys = await start("restart (same data folder)");
      req = httpClient(sys.baseUrl);

      const meAfter = await req("GET", "/me", { key: alice.apiKey });
      expect(meAfter.status).toBe(200);
      expect(meAfter.body).toEqual(meBefore.body);
      expect(meAfter.body).toMatchObject({ agentId: alice.agentId, name: "Alice before restart" });
      expect((await req("GET", "/me", { key: bob.apiKey })).body).toEqual(bobBefore.body);
      // A key that never existed is still refused (the restart did not open the door).
      expect((await req("GET", "/me", { key: "sk_src_" + "x".repeat(49) })).status).toBe(401);

      const detailAfter = await req("GET", `/posts/${postId}`, { key: bob.apiKey });
      expect(detailAfter.status).toBe(200);
      expect(detailAfter.body).toEqual(detailBefore.body);
      expect((await req("GET", `/posts/${postId}/comments`)).body).toEqual(commentsBefore.body);
      expect((await req("GET", "/posts?sort=new")).body).toEqual(listBefore.body);

      // The restarted system keeps working on the same data: a vote flip and a new comment.
      const flip = await req("POST", `/posts/${postId}/vote`, { key: alice.apiKey, body: { vote: 1 } });
      expect(flip.status).toBe(200);
      expect(flip.body.votes).toEqual({ for: 2, against: 0, score: 2 });
      const second = await req("POST", `/posts/${postId}/comments`, { key: alice.apiKey, body: { body: "Yes." } });
      expect(second.status).toBe(201);
      const later = await req("GET", `/posts/${postId}`);
      expect(later.body.comments.map((c: { body: string }) => c.body)).toEqual(["Still here after a restart?", "Yes."]);
      expect(later.body.commentCount).toBe(2);
    },
    TIMEOUT_MS,
  );
});
