import { status as GrpcStatus } from "@grpc/grpc-js";
import { ApsError, createLogger, HealthClient, InProcessBus, KnowledgeClient, serviceClient } from "@aps/platform";
import { waitUntil } from "@aps/testkit";
import { EmbeddedEngine, type SearchEngine } from "./engine.js";
import { MeiliEngine } from "./meili.js";
import { startKnowledge, type KnowledgeHandle } from "./service.js";
import { knowledge as knowledgeProto } from "@aps/proto";

/**
 * Knowledge starts while its search engine cannot be reached (docs/reliability.md):
 * it serves gRPC, NOT_SERVING on its health and UNAVAILABLE (503 `upstream_unavailable` at the
 * gateway) on every search, and prepares the engine again until it answers. Before, `startKnowledge`
 * threw and the pod crash-looped. The forum is unreachable here too (the re-index retries; not asked).
 */
const log = createLogger("knowledge-engine-down-test", "silent");
const searchCode = (c: KnowledgeClient) =>
  c.search({ q: "voting", tags: [], limit: 5 }).then(
    () => GrpcStatus.OK,
    (err: unknown) => ((err as ApsError).cause as { code?: number } | undefined)?.code,
  );

describe("knowledge with its search engine down at start", () => {
  let k: KnowledgeHandle | undefined;
  let client: KnowledgeClient | undefined;
  let health: HealthClient | undefined;
  afterEach(async () => {
    client?.close();
    health?.close();
    await k?.stop();
    k = client = health = undefined;
  });

  const start = async (engine: SearchEngine) => {
    k = await startKnowledge(
      { bus: new InProcessBus(log), log },
      { listenAddr: "127.0.0.1:0", forumAddr: "127.0.0.1:1", engine },
    );
    client = serviceClient(knowledgeProto.KnowledgeServiceDefinition, `127.0.0.1:${k.port}`);
    health = new HealthClient(`127.0.0.1:${k.port}`);
  };

  it("a real Meilisearch client to an address nobody listens on: the service starts, NOT_SERVING, searches UNAVAILABLE", async () => {
    await start(new MeiliEngine({ url: "http://127.0.0.1:1", index: "aps-knowledge" }));
    expect(await searchCode(client!)).toBe(GrpcStatus.UNAVAILABLE);
    await waitUntil("health NOT_SERVING", async () => (await health!.check(2_000)) === "NOT_SERVING");
  });

  it("an engine that comes up later (stand-in for Meilisearch, which cannot run here): tried again until it answers, then searches work", async () => {
    const real = new EmbeddedEngine();
    let failures = 2;
    const flaky: SearchEngine = Object.assign(Object.create(real) as SearchEngine, {
      init: async () => {
        if (failures-- > 0) throw new Error("connect ECONNREFUSED (engine not up yet)");
        await real.init();
      },
    });
    await start(flaky);
    expect(await searchCode(client!)).toBe(GrpcStatus.UNAVAILABLE);
    await waitUntil("a search answers", async () => (await searchCode(client!)) === GrpcStatus.OK, {
      timeoutMs: 30_000,
    });
    expect(failures).toBeLessThan(0);
    // the reference pages were indexed once the engine answered
    const r = await client!.search({ q: "voting", tags: ["docs"], limit: 5 });
    expect(r.hits.length).toBeGreaterThan(0);
    await waitUntil("health SERVING", async () => (await health!.check(2_000)) === "SERVING");
  }, 60_000);
});
