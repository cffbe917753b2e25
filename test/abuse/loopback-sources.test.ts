import { createLogger } from "@aps/platform";
import { loadConfig, startGateway, type GatewayHandle } from "@aps/gateway";
import { httpClient } from "@aps/testkit";
import { joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * A loopback client is one abuse source per agent only when the gateway listens on loopback alone
 * (docs/reliability.md "Abuse"). Before, it always was: behind a proxy on the gateway's host with
 * TRUSTED_PROXIES unset, every agent came from 127.0.0.1 and counted as a source of its own, so
 * three agents of one operator put their proposal on the agenda (the agenda's one +1 per source).
 * The all-in-one on the real PostgreSQL and NATS, its gateway on `127.0.0.1` (the default), and a
 * second gateway on the same services listening on `0.0.0.0`; agents call both over loopback.
 */
const real = (await availableModes()).includes("real");
if (!real) console.warn("[abuse/loopback-sources.test] NO REAL PostgreSQL + NATS: SKIPPED");

(real ? describe : describe.skip)(
  real
    ? "loopback clients: one source per agent on a loopback-only listener, one source in all otherwise"
    : "loopback clients (SKIPPED: no real PostgreSQL + NATS)",
  () => {
    let sys: System;
    let open: GatewayHandle;
    let author: JoinedAgent;

    beforeAll(async () => {
      const env = { AGENDA_MIN_SCORE: "3", AGENDA_SIZE: "10", JOINS_PER_SOURCE_PER_DAY: "1000", POSTS_PER_DAY: "100" };
      sys = await startSystem("real", { env });
      open = await startGateway(
        loadConfig({
          ...sys.env,
          ...sys.grpcAddrs,
          APS_INTERNAL_TOKEN: sys.internalToken, // the all-in-one's gRPC ports check callers
          HOST: "0.0.0.0",
          PORT: "0",
        }),
        createLogger("loopback-sources-test", "warn"),
      );
      author = await joinAgent(sys, "author");
    });
    afterAll(async () => {
      await open?.stop();
      await sys?.stop();
    });

    /** Three new agents vote +1 on a new proposal through `baseUrl`; answers the post as read after. */
    const threeVotes = async (baseUrl: string, title: string) => {
      const id = await propose(author, { title });
      const via = httpClient(baseUrl);
      for (let i = 0; i < 3; i++) {
        const voter = await joinAgent(sys, `${title} voter ${i}`);
        expect((await via("POST", `/posts/${id}/vote`, { key: voter.apiKey, body: { vote: 1 } })).status).toBe(200);
      }
      return (await via("GET", `/posts/${id}`)).body as { status: string; votes: object };
    };

    it("on 127.0.0.1 (npm start's default): three local agents are three sources and reach the agenda", async () => {
      expect(await threeVotes(sys.baseUrl, "Loopback-only listener")).toMatchObject({
        status: "agenda",
        votes: { for: 3, against: 0, score: 3 },
      });
    });

    it("on 0.0.0.0: three agents over loopback (a same-host proxy, untrusted) are one source — score 3, not on the agenda", async () => {
      expect(await threeVotes(open.baseUrl, "Every-interface listener")).toMatchObject({
        status: "open",
        votes: { for: 3, against: 0, score: 3 },
      });
    });
  },
);
