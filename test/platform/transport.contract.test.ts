import {
  ApsError,
  CouncilClient,
  ForumClient,
  IdentityClient,
  KnowledgeClient,
  TranslationClient,
  serviceClient,
} from "@aps/platform";
import { eventually } from "@aps/testkit";
import { waitForSettled } from "../support/settle.js";
import { availableModes, startSystem, type System } from "../support/system.js";
import {
  council as councilProto,
  forum as forumProto,
  identity as identityProto,
  knowledge as knowledgeProto,
  translation as translationProto,
} from "@aps/proto";

/**
 * One contract, two transports (docs/design/services.md#in-process-transport):
 * the typed clients of every service run over gRPC (the all-in-one's loopback ports, as the
 * distributed mode calls them) and over the in-process endpoints the all-in-one's own clients
 * use, against the same running services. Whatever one transport wrote, both read back equal;
 * both answer the same errors — not_found, invalid_request (INVALID_ARGUMENT + APS code),
 * unauthenticated, invalid_state, rate_limited with its retry hint — and both report the services
 * unavailable (and not ready) once they are stopped.
 */
const modes = await availableModes();
const mode = modes.includes("real") ? "real" : "embedded";
const POSTS_PER_DAY = 3;

interface Clients {
  name: "grpc" | "local";
  identity: IdentityClient;
  forum: ForumClient;
  council: CouncilClient;
  knowledge: KnowledgeClient;
  translation: TranslationClient;
}

/** The outcome of a call as data: its result, or its ApsError (code, message, retry hint). */
type Outcome<T> = { ok: T } | { error: { code: string; message: string; retry: number | undefined } };
async function outcome<T>(p: Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: await p };
  } catch (err) {
    if (!(err instanceof ApsError)) throw err;
    return { error: { code: err.code, message: err.message, retry: err.retryAfterSeconds } };
  }
}

describe(`typed clients over gRPC and in-process (${mode})`, () => {
  let sys: System;
  let stopped = false;
  let both: [Clients, Clients];
  /** Runs `call` over both transports and expects the same outcome; returns it. */
  const same = async <T>(call: (c: Clients) => Promise<T>) => {
    const [viaGrpc, viaLocal] = (await Promise.all(both.map((c) => outcome(call(c))))) as [Outcome<T>, Outcome<T>];
    expect(viaLocal).toEqual(viaGrpc);
    return viaLocal;
  };

  beforeAll(async () => {
    sys = await startSystem(mode, {
      env: { POSTS_PER_DAY: String(POSTS_PER_DAY), JOINS_PER_SOURCE_PER_DAY: "1000", AGENDA_MIN_SCORE: "1000" },
    });
    const addrs = sys.grpcAddrs!;
    const local = sys.local!;
    // the gRPC ports check callers (the all-in-one's internal token); in-process calls are not checked
    const caller = { name: "gateway", token: sys.internalToken! };
    both = [
      {
        name: "grpc",
        identity: serviceClient(identityProto.IdentityServiceDefinition, addrs.IDENTITY_GRPC_ADDR!, { caller }),
        forum: serviceClient(forumProto.ForumServiceDefinition, addrs.FORUM_GRPC_ADDR!, { caller }),
        council: serviceClient(councilProto.CouncilServiceDefinition, addrs.COUNCIL_GRPC_ADDR!, { caller }),
        knowledge: serviceClient(knowledgeProto.KnowledgeServiceDefinition, addrs.KNOWLEDGE_GRPC_ADDR!, {
          caller,
        }),
        translation: serviceClient(translationProto.TranslationServiceDefinition, addrs.TRANSLATION_GRPC_ADDR!, {
          caller,
        }),
      },
      {
        name: "local",
        identity: serviceClient(identityProto.IdentityServiceDefinition, local.identity),
        forum: serviceClient(forumProto.ForumServiceDefinition, local.forum),
        council: serviceClient(councilProto.CouncilServiceDefinition, local.council),
        knowledge: serviceClient(knowledgeProto.KnowledgeServiceDefinition, local.knowledge),
        translation: serviceClient(translationProto.TranslationServiceDefinition, local.translation),
      },
    ];
  });
  afterAll(async () => {
    for (const c of both ?? [])
      for (const client of [c.identity, c.forum, c.council, c.knowledge, c.translation]) client.close();
    if (!stopped) await sys?.stop();
  });

  it("reads back equal over both transports whatever either one wrote", async () => {
    for (const writer of both) {
      const joined = await writer.identity.join({
        name: `author via ${writer.name}`,
        url: "",
        source: "203.0.113.9",
        idempotencyKey: "",
      });
      // authenticate also names the presented key's scope (a join's key writes)
      expect(await same((c) => c.identity.authenticate({ apiKey: joined.apiKey }))).toEqual({
        ok: { ...joined.agent, keyScope: "write" },
      });
      expect(await same((c) => c.identity.getAgent({ agentId: joined.agent!.agentId }))).toEqual({ ok: joined.agent });
      const author = { agentId: joined.agent!.agentId, name: joined.agent!.name };

      const post = await writer.forum.createPost({
        author,
        title: `Proposal via ${writer.name}`,
        body: "Use one transport contract for both modes.",
        isArchDesign: true,
        idempotencyKey: "",
      });
      expect(await same((c) => c.forum.getPosts({ ids: [post.id] }))).toEqual({ ok: { items: [post] } });
      const comment = await writer.forum.createComment({
        postId: post.id,
        author,
        body: "A comment.",
        idempotencyKey: "",
      });
      const vote = await writer.forum.castVote({
        postId: post.id,
        voterId: author.agentId,
        vote: 1,
        idempotencyKey: "",
        source: "",
      });
      expect(vote).toMatchObject({ postId: post.id, vote: 1, votes: { for: 1, against: 0, score: 1 } });
      const detail = await same((c) => c.forum.getPost({ id: post.id, viewerId: author.agentId }));
      expect(detail).toMatchObject({ ok: { comments: [comment], myVote: 1, commentsNextCursor: "" } });
      await same((c) => c.forum.listComments({ postId: post.id, limit: 10, cursor: "" }));
      await same((c) => c.forum.votesAt({ postId: post.id, at: new Date(Date.now() + 60_000).toISOString() }));
      await same((c) => c.forum.getAuthorStats({ agentId: author.agentId }));
      await same((c) => c.forum.getDailyUsage({ agentId: author.agentId }));
      await same((c) => c.translation.getQuota({ agentId: author.agentId }));
      await same((c) => c.identity.listAwards({ agentId: author.agentId, limit: 10, cursor: "" }));

      // The council calls identity and forum itself: over the transport of the all-in-one.
      const councillor = await writer.identity.join({
        name: `councillor via ${writer.name}`,
        url: "",
        source: "203.0.113.9",
        idempotencyKey: "",
      });
      await writer.identity.grantSeat({ agentId: councillor.agent!.agentId, seat: "councillor" });
      const opened = await writer.council.nominate({
        postId: post.id,
        councillorId: councillor.agent!.agentId,
        idempotencyKey: "",
      });
      expect(opened).toMatchObject({
        postId: post.id,
        ballots: [expect.objectContaining({ councillorId: councillor.agent!.agentId, vote: "approve" })],
      });
      expect(await same((c) => c.council.getCase({ postId: post.id }))).toEqual({ ok: { found: true, case: opened } });
      // Nominating twice is an invalid_state on either transport. Its message names the post's
      // status, which the forum learns from the council's events (review, then adopted): compare
      // once both transports read the settled status (condition wait, generous ceiling).
      await eventually(
        async () =>
          void (await same((c) =>
            c.council.nominate({ postId: post.id, councillorId: councillor.agent!.agentId, idempotencyKey: "" }),
          )),
        30_000,
        100,
      );
    }
    // the posts' statuses come from the council's events (review, then adopted): compare the lists
    // once every event is delivered, not while the forum's projection still moves between two reads
    await waitForSettled(sys);
    const pages = [
      await same((c) =>
        c.forum.listPosts({ kind: "all", sort: "hot", limit: 25, cursor: "", authorId: "", fullBodies: false }),
      ),
      await same((c) =>
        c.forum.listPosts({ kind: "arch", sort: "new", limit: 1, cursor: "", authorId: "", fullBodies: false }),
      ),
    ];
    expect(pages.map((p) => ("ok" in p ? p.ok.items.length : -1))).toEqual([2, 1]);
    await same((c) => c.identity.countSeats({ seat: "councillor" }));
    await same((c) => c.council.listCases({ statuses: ["agenda", "review"], limit: 10, cursor: "", order: "" }));
    // The search index learns each post's status from the council's events (open, then review):
    // compare once both transports read the settled index (condition wait, as for the nomination).
    await eventually(
      async () => void (await same((c) => c.knowledge.search({ q: "transport", tags: [], limit: 10 }))),
      30_000,
      100,
    );
    await eventually(
      async () => void (await same((c) => c.knowledge.similar({ title: "Proposal via grpc", body: "", limit: 5 }))),
      30_000,
      100,
    );
  });

  it("answers the same errors over both transports", async () => {
    const missing = await same((c) => c.forum.getPost({ id: "p_01ARZ3NDEKTSV4RRFFQ69G5FAV" }));
    expect(missing).toMatchObject({ error: { code: "not_found" } });
    expect(await same((c) => c.identity.getAgent({ agentId: "ext_01ARZ3NDEKTSV4RRFFQ69G5FAV" }))).toMatchObject({
      error: { code: "not_found" },
    });
    const invalid = await same((c) =>
      c.forum.listPosts({ kind: "all", sort: "hot", limit: 0, cursor: "", authorId: "", fullBodies: false }),
    );
    expect(invalid).toMatchObject({ error: { code: "invalid_request", message: expect.stringContaining("limit") } });
    expect(await same((c) => c.knowledge.search({ q: "x", tags: ["not a tag!"], limit: 5 }))).toMatchObject({
      error: { code: "invalid_request" },
    });
    expect(await same((c) => c.identity.authenticate({ apiKey: "aps_not-a-key" }))).toMatchObject({
      error: { code: "unauthenticated" },
    });
    expect(
      await same((c) =>
        c.council.castBallot({
          postId: "p_01ARZ3NDEKTSV4RRFFQ69G5FAV",
          councillorId: "ext_01ARZ3NDEKTSV4RRFFQ69G5FAV",
          vote: "approve",
          reason: "x",
          idempotencyKey: "",
        }),
      ),
    ).toMatchObject({
      error: { code: expect.stringMatching(/^(invalid_state|forbidden|not_found)$/) },
    });

    // POSTS_PER_DAY reached: quota_exceeded (a daily limit, docs/design/agents.md#discovery) with the seconds to the next UTC day, on both.
    const [first] = both;
    const joined = await first.identity.join({ name: "prolific", url: "", source: "203.0.113.10", idempotencyKey: "" });
    const author = { agentId: joined.agent!.agentId, name: joined.agent!.name };
    for (let i = 0; i < POSTS_PER_DAY; i++)
      await first.forum.createPost({
        author,
        title: `Post ${i}`,
        body: "Body.",
        isArchDesign: false,
        idempotencyKey: "",
      });
    const limited = await Promise.all(
      both.map((c) =>
        outcome(
          c.forum.createPost({ author, title: "One too many", body: "Body.", isArchDesign: false, idempotencyKey: "" }),
        ),
      ),
    );
    const errors = limited.map((o) => ("error" in o ? o.error : undefined));
    expect(errors[0]).toMatchObject({ code: "quota_exceeded", retry: expect.any(Number) });
    expect(errors[1]).toMatchObject({ code: errors[0]!.code, message: errors[0]!.message });
    expect(Math.abs(errors[1]!.retry! - errors[0]!.retry!)).toBeLessThanOrEqual(1);
    expect(errors[0]!.retry!).toBeGreaterThan(0);
  });

  it("is ready while serving; unavailable and not ready over both once the services stop", async () => {
    for (const c of both)
      expect([
        c.name,
        await c.forum.ready(2_000),
        await c.identity.ready(2_000),
        await c.council.ready(2_000),
        await c.knowledge.ready(2_000),
        await c.translation.ready(2_000),
      ]).toEqual([c.name, true, true, true, true, true]);
    const [first] = both;
    const joined = await first.identity.join({
      name: "last voter",
      url: "",
      source: "203.0.113.11",
      idempotencyKey: "",
    });
    const post = await first.forum.createPost({
      author: { agentId: joined.agent!.agentId, name: "last voter" },
      title: "Last",
      body: "Body.",
      isArchDesign: false,
      idempotencyKey: "",
    });
    stopped = true;
    await sys.stop();
    // A write (never retried) and a read (retried on transport failures, then given up).
    expect(
      await same((c) =>
        c.forum.castVote({
          postId: post.id,
          voterId: joined.agent!.agentId,
          vote: 1,
          idempotencyKey: "",
          source: "",
        }),
      ),
    ).toMatchObject({ error: { code: "upstream_unavailable" } });
    expect(await same((c) => c.forum.getPosts({ ids: [post.id] }))).toMatchObject({
      error: { code: "upstream_unavailable" },
    });
    expect(await same((c) => c.identity.authenticate({ apiKey: joined.apiKey }))).toMatchObject({
      error: { code: "upstream_unavailable" },
    });
    for (const c of both)
      expect([c.name, await c.forum.ready(500), await c.council.ready(500)]).toEqual([c.name, false, false]);
  });
});
