import { Metadata, status as GrpcStatus, type ServiceError } from "@grpc/grpc-js";
import { council, forum, identity, knowledge, notifications, translation } from "@aps/proto";
import type { Channel, ServiceDefinitionLike, UnaryCallback } from "./channel.js";
import { serviceClient } from "./connect.js";
import { isRetriable, READ_RETRY_DELAYS_MS } from "./middleware.js";
import { CODE_METADATA_KEY } from "../errors.js";

/**
 * Retries are declared once per method in the .proto (`option idempotency_level =
 * NO_SIDE_EFFECTS`, docs/design/services.md#retries-declared-in-the-proto) and applied by one middleware, retryMiddleware. Every RPC of every
 * service is classified here by its verb, so a new RPC without the right declaration fails.
 */
const SERVICES: ServiceDefinitionLike[] = [
  council.CouncilServiceDefinition,
  forum.ForumServiceDefinition,
  identity.IdentityServiceDefinition,
  knowledge.KnowledgeServiceDefinition,
  notifications.NotificationsServiceDefinition,
  translation.TranslationServiceDefinition,
];
/** Verbs of methods that only read: running them twice changes nothing (VerifyAudit walks the audit chain, docs/design/identity-and-abuse.md#audit-log). */
const READS = /^(Get|List|Search|Similar|Count|VotesAt|Authenticate|ResolveMentions|Unread$|VerifyAudit$)/;
/** Verbs of methods that change state (or spend quota): never sent twice by the client. */
const WRITES =
  /^(Create|Cast|Join|Rotate|Grant|Revoke|Suspend|Reinstate|Moderate|Begin|Finish|Translate|Nominate|Record|Complete|CloseDue|Flag|Raise|Resolve|Update|Edit|Verify|Report|Withdraw|Mark|Set|Ping|Redeliver|Delete|Append)/;
/**
 * Writes that set a state, declared IDEMPOTENT: the same call again writes nothing, so a call lost
 * with its connection is sent again. A ballot (docs/design/votes-and-heat.md#idempotent-castvote), several at once
 * (docs/design/votes-and-heat.md#gateway-batching); the inbox read up to a cursor, a webhook deleted, a watch level set
 * (docs/design/notifications.md); the owner's review decision (docs/design/identity-and-abuse.md#review-queue).
 */
const STATE_SETS = /^(CastVotes?|MarkRead|DeleteWebhook|SetWatch|RecordReview)$/;

describe("retry policy from the proto", () => {
  it.each(SERVICES.map((s) => [s.fullName, s] as const))(
    "%s: every read and state set is retriable, no other write is",
    (_n, svc) => {
      for (const m of Object.values(svc.methods)) {
        const kind = READS.test(m.name)
          ? "read"
          : STATE_SETS.test(m.name)
            ? "state set"
            : WRITES.test(m.name)
              ? "write"
              : "unclassified";
        const level = kind === "read" ? "NO_SIDE_EFFECTS" : kind === "state set" ? "IDEMPOTENT" : undefined;
        expect([m.name, kind, isRetriable(m), m.options?.idempotencyLevel]).toEqual([
          m.name,
          kind === "unclassified" ? "a verb the test knows" : kind,
          kind !== "write",
          level,
        ]);
      }
    },
  );

  /**
   * A forum client over an endpoint whose methods fail with `failures` transport errors
   * (UNAVAILABLE, no APS code) — or, with `apsCode`, UNAVAILABLE answered by the service itself —
   * then answer. `deadlineMs`: the client's deadline.
   */
  function flaky(failures: number, apsCode?: string, deadlineMs?: number) {
    const calls = { n: 0 };
    const method = (_req: unknown, _md: Metadata, _opts: unknown, cb: UnaryCallback<unknown>) => {
      calls.n++;
      if (calls.n <= failures) {
        const metadata = new Metadata();
        if (apsCode) metadata.set(CODE_METADATA_KEY, apsCode);
        const err: ServiceError = Object.assign(new Error("connect ECONNREFUSED"), {
          code: GrpcStatus.UNAVAILABLE,
          details: "connect ECONNREFUSED",
          metadata,
        });
        cb(err, undefined);
      } else cb(null, { ok: true });
    };
    const methods = new Proxy({}, { get: () => method }) as Channel<typeof forum.ForumServiceDefinition>;
    const client = serviceClient(
      forum.ForumServiceDefinition,
      { definition: forum.ForumServiceDefinition, methods, serving: () => true },
      { deadlineMs },
    );
    return { calls, client };
  }

  it("never retries an UNAVAILABLE the service answered itself (it carries an APS code)", async () => {
    const { calls, client } = flaky(1, "upstream_unavailable");
    await expect(client.getDailyUsage({ agentId: "ext_1" })).rejects.toMatchObject({ code: "upstream_unavailable" });
    expect(calls.n).toBe(1);
  });

  it("takes no pause that would end past the call's deadline: 250 ms, then answers at once", async () => {
    const { calls, client } = flaky(5, undefined, 1_000);
    const t = Date.now();
    await expect(client.getDailyUsage({ agentId: "ext_1" })).rejects.toMatchObject({ code: "upstream_unavailable" });
    // the first pause (250 ms) fits, the second (1 s) would end past the 1 s deadline
    expect(calls.n).toBe(2);
    expect(Date.now() - t).toBeGreaterThanOrEqual(READ_RETRY_DELAYS_MS[0]! - 10);
  });

  it("retries GetDailyUsage (a read the old wrappers never retried) after a transport failure", async () => {
    const { calls, client } = flaky(1);
    await expect(client.getDailyUsage({ agentId: "ext_1" })).resolves.toEqual({ ok: true });
    expect(calls.n).toBe(2);
  });

  it("never sends a write twice: CreateComment fails with the first transport failure", async () => {
    const { calls, client } = flaky(1);
    await expect(
      client.createComment({
        postId: "p_1",
        author: undefined,
        body: "once",
        idempotencyKey: "",
        parentId: "",
        source: "",
        mentionIds: [],
        mentions: [],
      }),
    ).rejects.toMatchObject({ code: "upstream_unavailable" });
    expect(calls.n).toBe(1);
  });

  it("sends an unkeyed CastVote again after a transport failure (a ballot is a state, docs/design/votes-and-heat.md#idempotent-castvote)", async () => {
    const { calls, client } = flaky(1);
    await expect(
      client.castVote({
        postId: "p_1",
        voterId: "a",
        vote: 1,
        idempotencyKey: "",
        source: "",
        traceHeaders: {},
        voterJoinedAt: "",
        reason: "",
        voterName: "",
      }),
    ).resolves.toEqual({ ok: true });
    expect(calls.n).toBe(2);
  });

  it("retries a write that carries an Idempotency-Key (its service runs it once per key, docs/design/edge.md#idempotency-key)", async () => {
    const { calls, client } = flaky(1);
    await expect(
      client.castVote({
        postId: "p_1",
        voterId: "a",
        vote: 1,
        idempotencyKey: "vote-1",
        source: "",
        traceHeaders: {},
        voterJoinedAt: "",
        reason: "",
        voterName: "",
      }),
    ).resolves.toEqual({ ok: true });
    expect(calls.n).toBe(2);
  });
});
