import { status as GrpcStatus, type ServiceError } from "@grpc/grpc-js";
import { knowledge } from "@aps/proto";
import { waitUntil } from "@aps/testkit";
import { createLogger } from "../log.js";
import { ApsError, CODE_METADATA_KEY, RETRY_AFTER_METADATA_KEY } from "../errors.js";
import { serviceClient, type ServiceClient } from "./connect.js";
import { startGrpcServer, unary, type RunningGrpcServer } from "./server.js";

/**
 * The in-process transport keeps the gRPC contract (docs/design/services.md#in-process-transport): one stub KnowledgeService is served over gRPC and in-process by the same server,
 * and every case is asserted on BOTH transports with the same expectation — results (unknown
 * fields dropped, no object shared with the handler), errors (status,
 * APS code, retry hint, message), internal errors, deadlines, and draining (calls in flight
 * answered, new ones refused UNAVAILABLE, readiness false).
 */
const log = createLogger("local-test", "silent");
type D = typeof knowledge.KnowledgeServiceDefinition;

/** What the stub's `search` does, chosen by `q`. */
const stored: knowledge.SearchResponse = {
  hits: [{ id: "doc:a", kind: "doc", title: "A", url: "/docs/a.md", snippet: "", tags: ["x"], score: 1.5 }],
  total: 1,
};
let release: () => void = () => undefined;
let held: Promise<void> = Promise.resolve();
/** `slow` answers only once the test lets it (after its callers' deadlines have passed). */
let answerSlow: () => void = () => undefined;
let slow: Promise<void> = Promise.resolve();
const received: knowledge.SearchRequest[] = [];

const impl = {
  search: unary<knowledge.SearchRequest, knowledge.SearchResponse>(log, async (req) => {
    received.push(req);
    switch (req.q) {
      case "stored":
        return stored;
      case "extra":
        // An unknown field: never sent over gRPC, so never seen by the caller.
        return {
          hits: [{ ...stored.hits[0]!, extra: "dropped" }],
          total: 1,
          more: true,
        } as unknown as knowledge.SearchResponse;
      case "sparse":
        // Absent scalars (a handler bug the generated types prevent).
        return { hits: [{ id: "p_1" } as unknown as knowledge.SearchHit] } as unknown as knowledge.SearchResponse;
      case "limited":
        throw new ApsError("rate_limited", "slow down", 7);
      case "missing":
        throw new ApsError("not_found", "no such thing");
      case "boom":
        throw new Error("secret internals");
      case "slow":
        await slow;
        return stored;
      case "held":
        await held;
        return stored;
      default:
        req.tags.push("mutated-by-handler");
        return { hits: [], total: req.limit };
    }
  }),
  similar: unary<knowledge.SimilarRequest, knowledge.SearchResponse>(log, async () => ({ hits: [], total: 0 })),
};

async function start(): Promise<{ server: RunningGrpcServer; transports: Array<[string, ServiceClient<D>]> }> {
  const server = await startGrpcServer(
    "127.0.0.1:0",
    [
      {
        name: "aps.knowledge.v1.KnowledgeService",
        definition: knowledge.KnowledgeServiceService,
        implementation: impl,
      },
    ],
    log,
  );
  return {
    server,
    transports: [
      ["grpc", serviceClient(knowledge.KnowledgeServiceDefinition, `127.0.0.1:${server.port}`)],
      [
        "local",
        serviceClient(knowledge.KnowledgeServiceDefinition, server.local(knowledge.KnowledgeServiceDefinition, impl)),
      ],
    ],
  };
}

const search = (c: ServiceClient<D>, q: string, deadlineMs?: number, tags: string[] = []) =>
  c.search({ q, tags, limit: 3 }, deadlineMs === undefined ? {} : { deadline: deadlineMs });

/** The gRPC failure under one call's ApsError (its `cause`: status, details, metadata), as a grpc-js client sees it. */
const rawError = (c: ServiceClient<D>, q: string) =>
  c.search({ q, tags: [], limit: 3 }).then(
    () => Promise.reject(new Error("no error")),
    (err: unknown) => (err as { cause: ServiceError }).cause,
  );

const apsError = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) =>
      err instanceof ApsError
        ? { code: err.code, message: err.message, retry: err.retryAfterSeconds }
        : { code: "not an ApsError", message: String(err), retry: undefined },
  );

describe("in-process transport vs gRPC: same answers", () => {
  let server: RunningGrpcServer;
  let transports: Array<[string, ServiceClient<D>]>;
  beforeAll(async () => ({ server, transports } = await start()));
  afterAll(async () => {
    for (const [, c] of transports) c.close();
    await server.shutdown(1_000);
  });

  it("returns equal results, unknown fields dropped", async () => {
    for (const q of ["stored", "extra", "plain"]) {
      const [viaGrpc, viaLocal] = await Promise.all(transports.map(([, c]) => search(c, q)));
      expect(viaLocal).toEqual(viaGrpc);
    }
    const [, local] = transports[1]!;
    expect(await search(local, "extra")).toEqual(stored);
  });

  it("the one known difference: absent scalars are proto3 defaults in-process, an internal error over gRPC (encode fails)", async () => {
    const [[, grpc], [, local]] = transports as [[string, ServiceClient<D>], [string, ServiceClient<D>]];
    expect(await apsError(search(grpc, "sparse"))).toEqual({
      code: "internal",
      message: "internal error",
      retry: undefined,
    });
    expect(await search(local, "sparse")).toEqual({
      hits: [{ id: "p_1", kind: "", title: "", url: "", snippet: "", tags: [], score: 0 }],
      total: 0,
    });
  });

  it("shares no object between caller and handler", async () => {
    const [, local] = transports[1]!;
    const got = await search(local, "stored");
    expect(got).not.toBe(stored);
    got.hits[0]!.tags.push("caller-edit");
    got.hits[0]!.title = "changed";
    expect(stored.hits[0]).toEqual({
      id: "doc:a",
      kind: "doc",
      title: "A",
      url: "/docs/a.md",
      snippet: "",
      tags: ["x"],
      score: 1.5,
    });
    const tags = ["t"];
    await search(local, "plain", undefined, tags);
    expect(tags).toEqual(["t"]);
    expect(received[received.length - 1]!.tags).not.toBe(tags);
  });

  it("answers the same errors: status, APS code, message and retry hint", async () => {
    for (const q of ["limited", "missing", "boom"]) {
      const [viaGrpc, viaLocal] = await Promise.all(transports.map(([, c]) => apsError(search(c, q))));
      expect(viaLocal).toEqual(viaGrpc);
    }
    const [, local] = transports[1]!;
    expect(await apsError(search(local, "limited"))).toEqual({ code: "rate_limited", message: "slow down", retry: 7 });
    expect(await apsError(search(local, "boom"))).toEqual({
      code: "internal",
      message: "internal error",
      retry: undefined,
    });
    for (const [name, c] of transports) {
      const err = await rawError(c, "limited");
      expect({
        name,
        code: err.code,
        details: err.details,
        aps: err.metadata.get(CODE_METADATA_KEY),
        retry: err.metadata.get(RETRY_AFTER_METADATA_KEY),
        isError: err instanceof Error,
      }).toEqual({
        name,
        code: GrpcStatus.RESOURCE_EXHAUSTED,
        details: "slow down",
        aps: ["rate_limited"],
        retry: ["7"],
        isError: true,
      });
    }
  });

  it("applies the caller's deadline: DEADLINE_EXCEEDED → upstream_unavailable", async () => {
    slow = new Promise<void>((r) => (answerSlow = r));
    try {
      // the handler answers only after the caller gave up: its deadline (100 ms) is what ends the call
      for (const [name, c] of transports)
        expect({ name, ...(await apsError(search(c, "slow", 100))) }).toMatchObject({
          name,
          code: "upstream_unavailable",
        });
    } finally {
      answerSlow();
    }
  });

  it("is ready while the server serves", async () => {
    for (const [name, c] of transports) expect([name, await c.ready(2_000)]).toEqual([name, true]);
  });
});

describe("in-process transport vs gRPC: draining", () => {
  it("answers the calls in flight, refuses new ones with UNAVAILABLE and reports not ready", async () => {
    const { server, transports } = await start();
    try {
      // Both channels connected before the drain.
      for (const [, c] of transports) await search(c, "plain");
      held = new Promise<void>((r) => (release = r));
      const heldBefore = received.filter((r) => r.q === "held").length;
      const inFlight = transports.map(([, c]) => search(c, "held"));
      // both calls are in the handler (in flight) before the drain starts
      await waitUntil(
        "both held calls in the handler",
        () => received.filter((r) => r.q === "held").length === heldBefore + transports.length,
        { timeoutMs: 5_000, intervalMs: 10 },
      );
      const stopping = server.shutdown(5_000);
      await new Promise((r) => setImmediate(r));
      for (const [name, c] of transports) {
        expect({ name, ...(await apsError(search(c, "plain"))) }).toMatchObject({ name, code: "upstream_unavailable" });
        expect([name, await c.ready(500)]).toEqual([name, false]);
      }
      release();
      for (const r of await Promise.all(inFlight)) expect(r).toEqual(stored);
      await stopping;
    } finally {
      release();
      for (const [, c] of transports) c.close();
    }
  });
});
