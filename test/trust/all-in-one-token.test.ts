import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status as GrpcStatus } from "@grpc/grpc-js";
import {
  ApsError,
  createLogger,
  IdentityClient,
  InProcessBus,
  type CallerIdentity,
  serviceClient,
} from "@aps/platform";
import { INTERNAL_TOKEN_FILE, allInOneTrust, startAllInOne, type AllInOne } from "@aps/all-in-one";
import { createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import { TEST_RATE_LIMITS } from "../support/system.js";
import { grpcCode } from "./grpc-code.js";
import { identity as identityProto } from "@aps/proto";

/**
 * The all-in-one's gRPC ports (docs/operations/secrets.md "The all-in-one's internal token"): they
 * listen on loopback for a second gateway and tooling, and before this check any local process could
 * call them — GrantSeat, which decides who closes Council cases, answered OK with no credentials.
 * Now the all-in-one keeps a token in `APS_DATA_DIR/internal-token` (mode 0600) and every gRPC port
 * accepts only callers presenting it. The real all-in-one on the real PostgreSQL, over real gRPC.
 */
const real = await hasPostgres();
const log = createLogger("all-in-one-token-test", "warn");

describe("allInOneTrust", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "aps-token-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("makes the token once (mode 0600) and reads the same one on the next start", () => {
    const first = allInOneTrust({}, dir, log);
    const file = join(dir, INTERNAL_TOKEN_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8").trim()).toBe(first.token);
    expect(first.token!.length).toBeGreaterThanOrEqual(32);
    expect(first.env.APS_INTERNAL_TOKEN).toBe(first.token);
    // every deployable name is accepted with it (a second gateway, a tool)
    for (const name of ["gateway", "forum", "identity", "council", "knowledge", "translation", "notifications"])
      expect(first.env.APS_PEER_DIGESTS).toMatch(new RegExp(`(^|,)${name}=[0-9a-f]{64}(,|$)`));
    const second = allInOneTrust({}, dir, log);
    expect(second.token).toBe(first.token);
  });

  it("refuses a token file others can read, naming the chmod", () => {
    allInOneTrust({}, dir, log);
    const file = join(dir, INTERNAL_TOKEN_FILE);
    chmodSync(file, 0o644);
    expect(() => allInOneTrust({}, dir, log)).toThrow(`chmod 600 ${file}`);
  });

  it("keeps the operator's APS_INTERNAL_TOKEN / APS_PEER_DIGESTS and makes no file", () => {
    const env = { APS_INTERNAL_TOKEN: "o".repeat(40) };
    expect(allInOneTrust(env, dir, log)).toEqual({ env, token: env.APS_INTERNAL_TOKEN });
    expect(() => statSync(join(dir, INTERNAL_TOKEN_FILE))).toThrow();
  });
});

(real ? describe : describe.skip)(
  real
    ? "the all-in-one's gRPC ports with its internal token"
    : "the all-in-one's gRPC ports with its internal token (SKIPPED: no PostgreSQL at 127.0.0.1:5432)",
  () => {
    let db: TestDatabase;
    let dataDir: string;
    let aps: AllInOne;
    const clients: IdentityClient[] = [];
    const client = (caller?: CallerIdentity) => {
      const c = serviceClient(identityProto.IdentityServiceDefinition, aps.grpcAddrs.IDENTITY_GRPC_ADDR, {
        caller,
      });
      clients.push(c);
      return c;
    };

    beforeAll(async () => {
      db = await createTestDatabase();
      dataDir = mkdtempSync(join(tmpdir(), "aps-token-aio-"));
      aps = await startAllInOne(
        {
          ...TEST_RATE_LIMITS,
          DATABASE_URL: db.url,
          APS_DATA_DIR: dataDir,
          APS_START_APERTIUM: "off",
          APS_ADMIN_TOKEN: "a".repeat(32),
          PORT: "0",
          HOST: "127.0.0.1",
          LOG_LEVEL: "warn",
        },
        log,
        new InProcessBus(log),
      );
    }, 120_000);

    afterAll(async () => {
      for (const c of clients) c.close();
      await aps?.stop();
      await db?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it("GrantSeat: UNAUTHENTICATED with no credentials or a guessed token, OK with the token in the data folder", async () => {
      const token = readFileSync(join(dataDir, INTERNAL_TOKEN_FILE), "utf8").trim();
      expect(aps.internalToken).toBe(token);
      const gateway = client({ name: "gateway", token });
      const { agent } = await gateway.join({ name: "seat-seeker", url: "", source: "127.0.0.1", idempotencyKey: "" });
      const agentId = agent!.agentId;
      expect(await grpcCode(client().grantSeat({ agentId, seat: "chief" }))).toBe(GrpcStatus.UNAUTHENTICATED);
      expect(
        await grpcCode(client({ name: "gateway", token: "g".repeat(43) }).grantSeat({ agentId, seat: "chief" })),
      ).toBe(GrpcStatus.UNAUTHENTICATED);
      expect(
        (await client()
          .getAgent({ agentId })
          .catch((e: unknown) => e)) instanceof ApsError,
      ).toBe(true);
      expect((await gateway.getAgent({ agentId })).seats).toEqual([]);
      expect((await gateway.grantSeat({ agentId, seat: "councillor" })).seats).toContain("councillor");
    });

    it("its own clients call in-process, unchecked: the API works through its gateway", async () => {
      const r = await fetch(`${aps.baseUrl}/join`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "in-process-caller" }),
      });
      expect(r.status).toBe(201);
    });
  },
);
