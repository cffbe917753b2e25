import { httpClient } from "@aps/testkit";
import { expectProblem, joinAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * "Revocation is final" (docs/design/identity-and-abuse.md#suspension-and-revocation): after the platform owner revoked an
 * agent's keys (`POST /admin/agents/{agentId}/keys/revoke`), a retry of an earlier rotation (the
 * old key with the same `Idempotency-Key`, docs/design/edge.md#authentication) or of the join (same source, key and body,
 * docs/design/agents.md#discovery) handed out a fresh working key for 5 minutes. The revocation is now recorded
 * (`agents.keys_revoked_at`) and both recovery paths check it: the rotation retry answers 403
 * `forbidden` (as for a suspended agent), the join retry 409 `invalid_state` (as for a join key past
 * its 5 minutes), each saying the keys were revoked, and neither returns a key. Before a revocation both retries still recover as documented.
 *
 * Mode `distributed` (one process per service, gRPC and JetStream between them): the rule lives in
 * the identity service, and the gateways drop cached authentications by event.
 */
const modes = (await availableModes()).filter((m) => m === "distributed");
if (modes.length === 0) console.warn("[revocation.test] NO REAL PostgreSQL + NATS: the revocation test is SKIPPED");

describe.each(modes)("revocation is final (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  beforeAll(async () => {
    sys = await startSystem(mode, { env: { JOINS_PER_SOURCE_PER_DAY: "1000" } });
    req = httpClient(sys.baseUrl);
  });
  afterAll(async () => {
    await sys?.stop();
  });

  const me = (key: string) => req("GET", "/me", { key });
  const rotate = (key: string, idem: string) =>
    req("POST", "/me/keys/rotate", { key, headers: { "idempotency-key": idem } });
  const join = (name: string, idem: string) =>
    req("POST", "/join", { body: { name }, headers: { "idempotency-key": idem } });

  it("before a revocation the rotation and join retries recover a key; after it neither returns a working key", async () => {
    // Before: a join retried with its Idempotency-Key answers the same agent with a fresh key.
    const joinKey = `join-${Date.now()}`;
    const a = await joinAgent(sys, "revoked agent", { idempotencyKey: joinKey });
    const rejoined = await join("revoked agent", joinKey);
    expect(rejoined.status).toBe(201);
    expect(rejoined.body.agentId).toBe(a.agentId);
    expect((await me(a.apiKey)).status).toBe(401); // the lost answer's key is revoked
    const k1 = rejoined.body.apiKey as string;
    expect((await me(k1)).body.agentId).toBe(a.agentId);

    // Before: a rotation retried with the old key and its Idempotency-Key completes it.
    const rotKey = `rotate-${Date.now()}`;
    const first = await rotate(k1, rotKey);
    expect(first.status).toBe(201);
    const retried = await rotate(k1, rotKey);
    expect(retried.status).toBe(201);
    expect(retried.body.agentId).toBe(a.agentId);
    expect((await me(first.body.apiKey)).status).toBe(401);
    const k2 = retried.body.apiKey as string;
    expect((await me(k2)).body.agentId).toBe(a.agentId);

    // The owner revokes every key of the agent.
    const revoked = await req("POST", `/admin/agents/${a.agentId}/keys/revoke`, {
      headers: { authorization: `Bearer ${sys.adminToken}` },
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ agentId: a.agentId, revoked: 1 });
    expect((await me(k2)).status).toBe(401);

    // After: the rotation retry (still within its 5 minutes) and the join retry hand out no key.
    for (const [what, answer, status, code] of [
      ["rotation retry", await rotate(k1, rotKey), 403, "forbidden"],
      ["join retry", await join("revoked agent", joinKey), 409, "invalid_state"],
    ] as const) {
      expectProblem(answer, status, code, what);
      expect(answer.body.detail).toMatch(/revoked/);
      expect(answer.body.apiKey).toBeUndefined();
      if (typeof answer.body.apiKey === "string") expect((await me(answer.body.apiKey)).status).toBe(401);
    }
    // Nothing of the agent authenticates, and a new join with the same body is a new identity.
    for (const k of [a.apiKey, k1, first.body.apiKey as string, k2]) expect((await me(k)).status).toBe(401);
    const fresh = await joinAgent(sys, "revoked agent", { idempotencyKey: `join-again-${Date.now()}` });
    expect(fresh.agentId).not.toBe(a.agentId);
  });
});
