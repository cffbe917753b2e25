import net from "node:net";
import { waitUntil } from "@aps/testkit";
import { createLogger } from "../log.js";
import { ApsError } from "../errors.js";
import { council, knowledge } from "@aps/proto";
import { serviceClient } from "./connect.js";
import { LIVENESS_SERVICE, startGrpcServer, unary, type RunningGrpcServer } from "./server.js";
import { HealthClient } from "./health.js";

/**
 * Readiness and retries of the gRPC plumbing (docs/design/operations.md#health-and-readiness): a server's health follows its dependency probe ("" and the named
 * services NOT_SERVING while it fails, SERVING again after) while the `liveness` entry stays
 * SERVING; a read reaches a service that starts a moment after the call was made (retried on the
 * transport failure), a write to the same absent service fails at once with upstream_unavailable.
 */
const log = createLogger("health-test", "silent");

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

const knowledgeImpl = {
  search: unary<knowledge.SearchRequest, knowledge.SearchResponse>(log, async (req) => ({
    hits: [],
    total: req.q.length,
  })),
  similar: unary<knowledge.SimilarRequest, knowledge.SearchResponse>(log, async () => ({ hits: [], total: 0 })),
};
const served = [
  {
    name: "aps.knowledge.v1.KnowledgeService",
    definition: knowledge.KnowledgeServiceService,
    implementation: knowledgeImpl,
  },
];

/** Looks at `check` every 50 ms until it holds; throws naming `what` after `ms` (× TEST_TIME_SCALE). */
async function waitFor(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  await waitUntil(what, check, { timeoutMs: ms, intervalMs: 50 });
}

describe("gRPC health follows the dependency probe", () => {
  let server: RunningGrpcServer;
  let health: HealthClient;
  let dbUp = true;

  beforeAll(async () => {
    server = await startGrpcServer("127.0.0.1:0", served, log, {
      probe: async () => (dbUp ? 1 : Promise.reject(new Error("ECONNREFUSED"))),
      probeIntervalMs: 50,
    });
    health = new HealthClient(`127.0.0.1:${server.port}`);
  });
  afterAll(async () => {
    health.close();
    await server.shutdown(1_000);
  });

  it("is NOT_SERVING (readiness) while the probe fails, liveness stays SERVING, and SERVING again after", async () => {
    expect(await health.check(2_000)).toBe("SERVING");
    dbUp = false;
    await waitFor("NOT_SERVING", async () => (await health.check(1_000)) === "NOT_SERVING");
    expect(await health.check(1_000, "aps.knowledge.v1.KnowledgeService")).toBe("NOT_SERVING");
    expect(await health.check(1_000, LIVENESS_SERVICE)).toBe("SERVING");
    expect(await health.serving(1_000)).toBe(false);
    dbUp = true;
    await waitFor("SERVING again", async () => (await health.check(1_000)) === "SERVING");
    expect(await health.check(1_000, "aps.knowledge.v1.KnowledgeService")).toBe("SERVING");
  });

  it("answers UNREACHABLE for an address where nothing listens", async () => {
    const h = new HealthClient(`127.0.0.1:${await freePort()}`);
    expect(await h.check(1_000)).toBe("UNREACHABLE");
    h.close();
  });
});

describe("retries only for reads", () => {
  it("a read reaches a service that comes up after the call started; a write to it fails with upstream_unavailable", async () => {
    const port = await freePort();
    const addr = `127.0.0.1:${port}`;
    const reader = serviceClient(knowledge.KnowledgeServiceDefinition, addr);
    const writer = serviceClient(council.CouncilServiceDefinition, addr);
    let server: RunningGrpcServer | undefined;
    try {
      let readSettled = false;
      const read = reader.search({ q: "abc", tags: [], limit: 5 }).finally(() => (readSettled = true));
      const write = writer.nominate({ postId: "p_x" }).then(
        () => "resolved",
        (err: unknown) => (err instanceof ApsError ? err.code : String(err)),
      );
      // the write failing proves nothing listened after both calls started; the read is still trying
      expect(await write).toBe("upstream_unavailable");
      expect(readSettled).toBe(false);
      server = await startGrpcServer(addr, served, log);
      expect(await read).toEqual({ hits: [], total: 3 });
    } finally {
      reader.close();
      writer.close();
      await server?.shutdown(1_000);
    }
  });
});
