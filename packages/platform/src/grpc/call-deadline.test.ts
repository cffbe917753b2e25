import { knowledge } from "@aps/proto";
import { createLogger } from "../log.js";
import { serviceClient, type ServiceClient } from "./connect.js";
import { startGrpcServer, unary, type RunningGrpcServer } from "./server.js";

/**
 * A client's call deadline (`GRPC_DEADLINE_MS`, docs/design/tests.md#real-infrastructure-in-ci): the deadline a call
 * that names none carries is the one its client was made with (`serviceClient`'s `deadlineMs`), else
 * DEFAULT_DEADLINE_MS — over gRPC (DeadlineChannel) and in-process alike. The stub records the deadline each call arrives with (ms left then).
 */
const log = createLogger("call-deadline-test", "silent");
type D = typeof knowledge.KnowledgeServiceDefinition;

/** ms left before each call's deadline when the handler saw it, in arrival order. */
const left: number[] = [];
const impl = {
  search: unary<knowledge.SearchRequest, knowledge.SearchResponse>(log, async (_req, call) => {
    const d = call.getDeadline();
    left.push((typeof d === "number" ? d : d.getTime()) - Date.now());
    return { hits: [], total: 0 };
  }),
  similar: unary<knowledge.SimilarRequest, knowledge.SearchResponse>(log, async () => ({ hits: [], total: 0 })),
};

const CONFIGURED_MS = 1_500;
let server: RunningGrpcServer;
const conns: ServiceClient<D>[] = [];

beforeAll(async () => {
  server = await startGrpcServer(
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
});
afterAll(async () => {
  for (const c of conns) c.close();
  await server?.shutdown(1_000);
});

/**
 * One search over `conn`, naming no deadline; resolves with the ms left that the handler saw.
 * A first call with a generous deadline of its own opens the channel (name resolution, connect):
 * on a loaded machine that alone took 1.3 s, past the 1.5 s under test.
 */
async function leftOnArrival(conn: ServiceClient<D>): Promise<number> {
  await conn.search({ q: "x", limit: 1 }, { deadline: 60_000 });
  const before = left.length;
  await conn.search({ q: "x", limit: 1 });
  expect(left.length).toBe(before + 1);
  return left[before]!;
}

describe.each([
  ["grpc", () => `127.0.0.1:${server.port}`],
  ["local", () => server.local(knowledge.KnowledgeServiceDefinition, impl)],
] as const)("calls over %s", (_name, target) => {
  it("carry the connection's deadline when one is configured, else the 10 s default", async () => {
    const configured = serviceClient(knowledge.KnowledgeServiceDefinition, target(), { deadlineMs: CONFIGURED_MS });
    conns.push(configured);
    const withConfigured = await leftOnArrival(configured);
    expect(withConfigured).toBeGreaterThan(0);
    expect(withConfigured).toBeLessThanOrEqual(CONFIGURED_MS);

    // a client with none configured keeps the default (DEFAULT_DEADLINE_MS, 10 s)
    const plain = serviceClient(knowledge.KnowledgeServiceDefinition, target());
    conns.push(plain);
    expect(await leftOnArrival(plain)).toBeGreaterThan(CONFIGURED_MS);
  });
});
