import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join as joinPath } from "node:path";
import pg from "pg";
import { eventually, httpClient, scaled, type HttpResult } from "@aps/testkit";
import { joinAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";
import { waitStrictly } from "../support/wait.js";

/**
 * Idempotency-Key on POST (docs/design/edge.md#request-path, Stripe semantics): one effect per key and body,
 * replays of the first response, 422 for a reused key with another body, 409 while the first
 * runs; records per API key, shared by every gateway replica (kept by the identity service). The
 * write itself is keyed in the service that owns it (docs/design/edge.md#idempotency-key): the fault tests hold the
 * forum's insert behind a table lock in the real PostgreSQL of the system, so the gateway answers
 * 503 (or the client leaves) before the forum commits, and check that the retry gets that post.
 */
/** Resolves once `cond` holds (checked every 100 ms), or rejects after `ms`. */
const waitFor = (cond: () => Promise<boolean>, ms: number) =>
  eventually(async () => {
    if (!(await cond())) throw new Error(`condition not met within ${ms} ms`);
  }, ms);

/**
 * Sends `send()` again while the answer is 409 (the first request with the key still runs: its
 * answer is stored once it has finished) and resolves the first other answer; fails on an error.
 */
const answerAfterInProgress = (send: () => Promise<HttpResult>, intervalMs: number): Promise<HttpResult> =>
  waitStrictly(
    "an answer other than 409 (the first request no longer in progress)",
    async () => {
      const r = await send();
      return r.status === 409 ? undefined : r;
    },
    { timeoutMs: 10_000, intervalMs },
  );

const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real");
/**
 * The gateway's call deadline here, ms: the 10 s default stretched by the load when the file starts
 * (scaled) — not by the run's ceiling, as other test systems are (stretchedDeadlines): one case
 * waits it out on purpose, a 503 after the write committed.
 */
const CALL_DEADLINE_MS = scaled(10_000);

describe.each(modes)("Idempotency-Key (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  beforeAll(async () => {
    sys = await startSystem(mode, {
      env: {
        JOINS_PER_SOURCE_PER_DAY: "1000",
        GRPC_DEADLINE_MS: String(CALL_DEADLINE_MS),
        DATABASE_POOL_WAIT_MS: String(Math.round(CALL_DEADLINE_MS * 0.8)),
      },
    });
    req = httpClient(sys.baseUrl);
  });
  afterAll(async () => {
    await sys?.stop();
  });
  /** A connection to the system's own PostgreSQL (the embedded server, or the machine's). */
  const database = () =>
    new pg.Client({
      connectionString: sys.env?.DATABASE_URL ?? readFileSync(joinPath(sys.dataDir!, "postgres.url"), "utf8").trim(),
    });
  /**
   * Holds an exclusive lock on the forum's posts table until `release()`: a CreatePost then waits
   * at its INSERT (inside its transaction), visible in pg_stat_activity.
   */
  async function holdPosts() {
    const c = database();
    await c.connect();
    // pg_stat_activity is read outside the lock's transaction: inside one it is a snapshot.
    const watcher = database();
    await watcher.connect();
    const schema = (
      await c.query<{ s: string }>(
        "SELECT table_schema AS s FROM information_schema.tables WHERE table_name = 'posts' AND table_schema <> 'public'",
      )
    ).rows[0]!.s;
    await c.query("BEGIN");
    await c.query(`LOCK TABLE "${schema}".posts IN SHARE MODE`);
    const waiting = async () =>
      Number(
        (
          await watcher.query<{ n: string }>(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO posts%'",
          )
        ).rows[0]!.n,
      );
    const postsBy = async (agentId: string) =>
      Number(
        (
          await watcher.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".posts WHERE author_id = $1`, [
            agentId,
          ])
        ).rows[0]!.n,
      );
    return {
      /** Resolves once a CreatePost waits behind the lock. */
      blocked: () => waitFor(async () => (await waiting()) > 0, 15_000),
      release: async () => {
        await c.query("COMMIT");
      },
      postsBy,
      close: async () => {
        await c.end();
        await watcher.end();
      },
    };
  }
  const myPosts = async (agentId: string) =>
    (await req("GET", "/posts?sort=new&limit=100")).body.items.filter(
      (p: { author: { agentId: string } }) => p.author.agentId === agentId,
    );

  it("creates one post for 50 identical concurrent POSTs with one key, and replays the first response", async () => {
    const a = await joinAgent(sys, "retrying agent");
    const body = { title: "Exactly once", body: "Retried many times.", is_arch_design: true };
    const headers = { "idempotency-key": "create-post-0001" };
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => req("POST", "/posts", { key: a.apiKey, body, headers })),
    );
    const created = answers.filter((r) => r.status === 201);
    const busy = answers.filter((r) => r.status === 409);
    expect(created.length + busy.length).toBe(50);
    // Exactly one request ran; every other 201 is a replay of its answer (same body, marked),
    // the rest were refused with 409 while it ran (docs/reliability.md figure).
    const originals = created.filter((r) => r.headers.get("idempotent-replayed") === null);
    expect(originals).toHaveLength(1);
    for (const r of created)
      if (r !== originals[0]) {
        expect(r.headers.get("idempotent-replayed")).toBe("true");
        expect(r.body).toEqual(originals[0]!.body);
      }
    for (const r of busy) expect(r.body.code).toBe("idempotency_in_progress");
    console.log(
      `Idempotency-Key × 50 concurrent (${mode}): 1 original, ${created.length - 1} replays, ${busy.length} × 409 in progress`,
    );
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    expect(await myPosts(a.agentId)).toHaveLength(1);

    // a later retry gets the stored response, marked as a replay
    const replay = await answerAfterInProgress(() => req("POST", "/posts", { key: a.apiKey, body, headers }), 20);
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(created[0]!.body);
    expect(replay.headers.get("location")).toBe(`/v1/posts/${created[0]!.body.id}`);
    expect(await myPosts(a.agentId)).toHaveLength(1);
  });

  it("refuses the same key with another body (422), keeps keys per API key, and leaves requests without a key alone", async () => {
    const a = await joinAgent(sys, "agent a");
    const b = await joinAgent(sys, "agent b");
    const headers = { "idempotency-key": "shared-key" };
    const first = await req("POST", "/posts", {
      key: a.apiKey,
      body: { title: "one", body: "x", is_arch_design: false },
      headers,
    });
    expect(first.status).toBe(201);
    const other = await req("POST", "/posts", {
      key: a.apiKey,
      body: { title: "two", body: "x", is_arch_design: false },
      headers,
    });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe("idempotency_mismatch");
    const otherPath = await req("POST", `/posts/${first.body.id}/comments`, {
      key: a.apiKey,
      body: { body: "x" },
      headers,
    });
    expect(otherPath.status).toBe(422);
    // another agent may use the same key text for its own request
    const fromB = await req("POST", "/posts", {
      key: b.apiKey,
      body: { title: "two", body: "x", is_arch_design: false },
      headers,
    });
    expect(fromB.status).toBe(201);
    expect(fromB.body.id).not.toBe(first.body.id);
    expect(await myPosts(a.agentId)).toHaveLength(1);
    // without the header every POST is a new request
    await req("POST", "/posts", { key: a.apiKey, body: { title: "one", body: "x", is_arch_design: false } });
    expect(await myPosts(a.agentId)).toHaveLength(2);
  });

  it("replays a refused request's answer too, and rejects malformed keys with 400", async () => {
    const a = await joinAgent(sys, "agent c");
    const headers = { "idempotency-key": "vote-on-nothing" };
    const missing = await req("POST", "/posts/p_01ARZ3NDEKTSV4RRFFQ69G5FAV/vote", {
      key: a.apiKey,
      body: { vote: 1 },
      headers,
    });
    expect(missing.status).toBe(404);
    // The answer is stored when the first response has finished: retry while it is in progress.
    const again = await answerAfterInProgress(
      () => req("POST", "/posts/p_01ARZ3NDEKTSV4RRFFQ69G5FAV/vote", { key: a.apiKey, body: { vote: 1 }, headers }),
      50,
    );
    expect(again.status).toBe(404);
    // A replay, not a re-run: marked, and the stored document carries the FIRST request's id,
    // while this request got an id of its own.
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(missing.body);
    expect(missing.body.requestId).toBeTruthy();
    expect(again.headers.get("x-request-id")).toBeTruthy();
    expect(again.headers.get("x-request-id")).not.toBe(missing.body.requestId);
    const bad = await req("POST", "/posts", {
      key: a.apiKey,
      body: { title: "t", body: "b", is_arch_design: true },
      headers: { "idempotency-key": "has space" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("invalid_request");
    expect(await myPosts(a.agentId)).toHaveLength(0);
  });

  it(
    "a retry after a 503 that came after the write committed gets that post, not a second one",
    async () => {
      const a = await joinAgent(sys, "agent after a 503");
      const body = { title: "Committed after the deadline", body: "The gateway gave up first.", is_arch_design: true };
      const headers = { "idempotency-key": "after-503" };
      const lock = await holdPosts();
      try {
        const first = req("POST", "/posts", { key: a.apiKey, body, headers });
        await lock.blocked();
        // The gateway's call to the forum passes its deadline (CALL_DEADLINE_MS) while the INSERT waits: 503.
        const answer = await first;
        expect(answer.status).toBe(503);
        expect(await lock.postsBy(a.agentId)).toBe(0);
        await lock.release();
        // The forum's transaction goes on and commits the post the client was told failed.
        await waitFor(async () => (await lock.postsBy(a.agentId)) === 1, 10_000);
        const retry = await req("POST", "/posts", { key: a.apiKey, body, headers });
        expect(retry.status).toBe(201);
        expect(await lock.postsBy(a.agentId)).toBe(1);
        const posts = await myPosts(a.agentId);
        expect(posts).toHaveLength(1);
        expect(retry.body.id).toBe(posts[0].id);
        expect(retry.headers.get("location")).toBe(`/v1/posts/${posts[0].id}`);
      } finally {
        await lock.release().catch(() => undefined);
        await lock.close();
      }
    },
    CALL_DEADLINE_MS + 30_000,
  );

  it(
    "a client that left before the answer gets the first answer on its retry (stored without a listener)",
    async () => {
      const a = await joinAgent(sys, "agent that timed out");
      const body = { title: "Answer nobody heard", body: "The client hung up.", is_arch_design: false };
      const raw = JSON.stringify(body);
      const lock = await holdPosts();
      try {
        // The client sends the whole request, then gives up (a client-side timeout) while it runs.
        const url = new URL(sys.baseUrl + "/posts");
        const gone = new Promise<void>((resolve) => {
          const r = httpRequest(url, {
            method: "POST",
            headers: {
              authorization: `Bearer ${a.apiKey}`,
              "content-type": "application/json",
              "content-length": String(Buffer.byteLength(raw)),
              "idempotency-key": "client-left",
            },
          });
          r.on("error", () => resolve());
          r.end(raw);
          void lock.blocked().then(() => (r.destroy(), resolve()));
        });
        await gone;
        await lock.release();
        await waitFor(async () => (await lock.postsBy(a.agentId)) === 1, 10_000);
        const retry = await answerAfterInProgress(
          () => req("POST", "/posts", { key: a.apiKey, body, headers: { "idempotency-key": "client-left" } }),
          50,
        );
        expect(retry.status).toBe(201);
        expect(retry.headers.get("idempotent-replayed")).toBe("true");
        const posts = await myPosts(a.agentId);
        expect(posts).toHaveLength(1);
        expect(retry.body.id).toBe(posts[0].id);
      } finally {
        await lock.release().catch(() => undefined);
        await lock.close();
      }
    },
    CALL_DEADLINE_MS + 30_000,
  );

  it("a request that never started executing binds no key: a cut-off upload or a 400, then the honest request runs", async () => {
    const a = await joinAgent(sys, "agent with a flaky uplink");
    const body = { title: "Sent twice", body: "The first upload broke off half-way.", is_arch_design: false };
    const raw = JSON.stringify(body);
    // 1. the upload breaks off half-way through the body
    await new Promise<void>((resolve) => {
      const r = httpRequest(new URL(sys.baseUrl + "/posts"), {
        method: "POST",
        headers: {
          authorization: `Bearer ${a.apiKey}`,
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(raw)),
          "idempotency-key": "cut-off",
        },
      });
      r.on("error", () => resolve());
      r.on("response", () => resolve());
      r.write(raw.slice(0, 20), () => setTimeout(() => (r.destroy(), resolve()), 100));
    });
    // 2. a body that fails validation (a 400: the operation never ran)
    const invalid = await req("POST", "/posts", {
      key: a.apiKey,
      body: { title: "Sent twice", is_arch_design: false },
      headers: { "idempotency-key": "cut-off" },
    });
    expect(invalid.status).toBe(400);
    const honest = await answerAfterInProgress(
      () => req("POST", "/posts", { key: a.apiKey, body, headers: { "idempotency-key": "cut-off" } }),
      50,
    );
    expect(honest.status).toBe(201);
    expect(honest.headers.get("idempotent-replayed")).toBeNull();
    expect(await myPosts(a.agentId)).toHaveLength(1);
  });
});
