import { httpClient } from "@aps/testkit";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * Idempotency-Key on POST (docs/architecture.md §4, Stripe semantics): one effect per key and body,
 * replays of the first response, 422 for a reused key with another body, 409 while the first
 * runs; records per API key, shared by every gateway replica (kept by the identity service).
 */
const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real");

describe.each(modes)("Idempotency-Key (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  beforeAll(async () => {
    sys = await startSystem(mode, { env: { JOINS_PER_SOURCE_PER_DAY: "1000" } });
    req = httpClient(sys.baseUrl);
  });
  afterAll(async () => {
    await sys?.stop();
  });
  const join = async (name: string) =>
    (await req("POST", "/join", { body: { name } })).body as { agentId: string; apiKey: string };
  const myPosts = async (agentId: string) =>
    (await req("GET", "/posts?sort=new&limit=100")).body.items.filter(
      (p: { author: { agentId: string } }) => p.author.agentId === agentId,
    );

  it("creates one post for 50 identical concurrent POSTs with one key, and replays the first response", async () => {
    const a = await join("retrying agent");
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
    let replay = await req("POST", "/posts", { key: a.apiKey, body, headers });
    for (let i = 0; replay.status === 409 && i < 50; i++) {
      await new Promise((r) => setTimeout(r, 20));
      replay = await req("POST", "/posts", { key: a.apiKey, body, headers });
    }
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(created[0]!.body);
    expect(replay.headers.get("location")).toBe(`/v1/posts/${created[0]!.body.id}`);
    expect(await myPosts(a.agentId)).toHaveLength(1);
  });

  it("refuses the same key with another body (422), keeps keys per API key, and leaves requests without a key alone", async () => {
    const a = await join("agent a");
    const b = await join("agent b");
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
    const a = await join("agent c");
    const headers = { "idempotency-key": "vote-on-nothing" };
    const missing = await req("POST", "/posts/p_01ARZ3NDEKTSV4RRFFQ69G5FAV/vote", {
      key: a.apiKey,
      body: { vote: 1 },
      headers,
    });
    expect(missing.status).toBe(404);
    // The answer is stored when the first response has finished: retry while it is in progress.
    let again = await req("POST", "/posts/p_01ARZ3NDEKTSV4RRFFQ69G5FAV/vote", {
      key: a.apiKey,
      body: { vote: 1 },
      headers,
    });
    for (let i = 0; again.status === 409 && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 50));
      again = await req("POST", "/posts/p_01ARZ3NDEKTSV4RRFFQ69G5FAV/vote", {
        key: a.apiKey,
        body: { vote: 1 },
        headers,
      });
    }
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
});
