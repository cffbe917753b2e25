import { status as GrpcStatus } from "@grpc/grpc-js";
import {
  CALLER_POLICY,
  createLogger,
  generateTrustEnv,
  HealthClient,
  IdentityClient,
  InProcessBus,
  openServiceDeps,
  type CallerIdentity,
  serviceClient,
} from "@aps/platform";
import { council, forum, identity, knowledge, notifications, translation } from "@aps/proto";
import { loadConfig as identityConfig, startIdentity, type IdentityHandle } from "@aps/identity";
import { createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import { grpcCode } from "./grpc-code.js";
import { identity as identityProto } from "@aps/proto";

/**
 * Internal trust on gRPC (docs/design/services.md#caller-policy-and-internal-trust, docs/reliability.md "Internal trust"):
 * the real identity service on the real PostgreSQL, started as a pod is (APS_INTERNAL_TOKEN +
 * APS_PEER_DIGESTS from generateTrustEnv, as deploy/local/start.mjs does), called over real gRPC.
 * GrantSeat — the seat decides who closes Council cases and so who earns Sagacity — answers
 * UNAUTHENTICATED without credentials or with a forged token, PERMISSION_DENIED to a genuine
 * service that is not declared for it (forum, council), and works for the gateway. Before the
 * check, every one of these calls succeeded.
 */
const real = await hasPostgres();
const NAMES = ["gateway", "forum", "identity", "council", "knowledge", "translation", "notifications"];

describe("CALLER_POLICY", () => {
  it("declares every method of every gRPC service, with known deployables only", () => {
    for (const def of [
      identity.IdentityServiceDefinition,
      forum.ForumServiceDefinition,
      council.CouncilServiceDefinition,
      knowledge.KnowledgeServiceDefinition,
      translation.TranslationServiceDefinition,
      notifications.NotificationsServiceDefinition,
    ]) {
      const declared = CALLER_POLICY[def.fullName] ?? {};
      expect(Object.keys(declared).sort()).toEqual(Object.keys(def.methods).sort());
      for (const callers of Object.values(declared)) for (const c of callers) expect(NAMES).toContain(c);
    }
  });
});

(real ? describe : describe.skip)(
  real
    ? "identity over gRPC with caller checks"
    : "identity over gRPC with caller checks (SKIPPED: no PostgreSQL at 127.0.0.1:5432)",
  () => {
    let db: TestDatabase;
    let svc: IdentityHandle;
    let addr: string;
    const trust = generateTrustEnv(NAMES);
    const as = (name: string, token = trust[name]!.APS_INTERNAL_TOKEN): CallerIdentity => ({ name, token });
    const clients: IdentityClient[] = [];
    const client = (caller?: CallerIdentity) => {
      const c = serviceClient(identityProto.IdentityServiceDefinition, addr, { caller });
      clients.push(c);
      return c;
    };

    beforeAll(async () => {
      db = await createTestDatabase();
      const log = createLogger("identity", "warn");
      const cfg = identityConfig({ DATABASE_URL: db.url, ...trust.identity, IDENTITY_LISTEN_ADDR: "127.0.0.1:0" });
      const deps = await openServiceDeps("identity", cfg, new InProcessBus(log), log);
      svc = await startIdentity(deps, {
        listenAddr: cfg.IDENTITY_LISTEN_ADDR,
        forumAddr: "127.0.0.1:1",
        joinsPerSourcePerDay: 100,
      });
      addr = `127.0.0.1:${svc.port}`;
    }, 60_000);

    afterAll(async () => {
      for (const c of clients) c.close();
      await svc?.stop();
      await db?.drop();
    });

    it("GrantSeat: UNAUTHENTICATED without credentials or with a forged token, PERMISSION_DENIED to forum and council, OK for the gateway", async () => {
      const gateway = client(as("gateway"));
      const { agent } = await gateway.join({ name: "trust-target", url: "", source: "127.0.0.1", idempotencyKey: "" });
      const agentId = agent!.agentId;
      expect(await grpcCode(client().grantSeat({ agentId, seat: "councillor" }))).toBe(GrpcStatus.UNAUTHENTICATED);
      // the gateway's name with another service's token, and a made-up caller
      expect(
        await grpcCode(
          client(as("gateway", trust.forum!.APS_INTERNAL_TOKEN)).grantSeat({ agentId, seat: "councillor" }),
        ),
      ).toBe(GrpcStatus.UNAUTHENTICATED);
      expect(await grpcCode(client(as("mallory", "x".repeat(64))).grantSeat({ agentId, seat: "councillor" }))).toBe(
        GrpcStatus.UNAUTHENTICATED,
      );
      expect(await grpcCode(client(as("forum")).grantSeat({ agentId, seat: "councillor" }))).toBe(
        GrpcStatus.PERMISSION_DENIED,
      );
      expect(await grpcCode(client(as("council")).grantSeat({ agentId, seat: "councillor" }))).toBe(
        GrpcStatus.PERMISSION_DENIED,
      );
      expect((await client(as("council")).getAgent({ agentId })).seats).toEqual([]); // declared: the council reads agents
      expect(await grpcCode(client(as("council")).getAgent({ agentId }))).toBe(GrpcStatus.OK);
      const seated = await gateway.grantSeat({ agentId, seat: "councillor" });
      expect(seated.seats).toContain("councillor");
    });

    it("the health check stays open (kubelet probes carry no token), the in-process endpoint is not checked", async () => {
      const health = new HealthClient(addr);
      try {
        expect(await health.serving(2_000)).toBe(true);
      } finally {
        health.close();
      }
      const local = serviceClient(identityProto.IdentityServiceDefinition, svc.local);
      expect((await local.countSeats({ seat: "councillor" })).count).toBeGreaterThanOrEqual(0);
    });
  },
);
