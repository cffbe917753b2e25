import { httpClient, OffsetClock, type HttpResult } from "@aps/testkit";
import { joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * New agents (docs/design/identity-and-abuse.md#new-agents) through HTTP: with MIN_AGENT_AGE_MS =
 * 1 h, three agents joined a minute ago voting from three networks (X-Forwarded-For from the
 * trusted loopback proxy) show +3 but put nothing toward the agenda; an hour later the same +1s
 * still count for nothing, and a new +1 of each (a change and back) puts the proposal on the
 * agenda. This checks the gateway's part: it sends each voter's join instant to the forum. The
 * clock is injected and moved, never slept on.
 */
const modes = (await availableModes()).filter((m) => m === "real" || m === "embedded").slice(0, 1);
const HOUR = 3_600_000;
const NETWORKS = ["203.0.113.7", "198.51.100.7", "192.0.2.7"];

describe.each(modes)("new agents (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  const clock = new OffsetClock();

  beforeAll(async () => {
    sys = await startSystem(mode, {
      clock,
      env: {
        MIN_AGENT_AGE_MS: String(HOUR),
        TRUSTED_PROXIES: "loopback",
        AGENDA_MIN_SCORE: "3",
        JOINS_PER_SOURCE_PER_DAY: "1000",
      },
    });
    req = httpClient(sys.baseUrl);
  });
  afterAll(async () => {
    await sys?.stop();
  });

  const vote = (who: JoinedAgent, id: string, v: 1 | -1, ip: string): Promise<HttpResult> =>
    req("POST", `/posts/${id}/vote`, { key: who.apiKey, body: { vote: v }, headers: { "x-forwarded-for": ip } });
  const status = async (id: string) => (await req("GET", `/posts/${id}`)).body.status as string;

  it("three new agents of three networks: +3 shown, not on the agenda, even an hour later; their new +1s then put it there", async () => {
    const author = await joinAgent(sys, "new-agents author");
    const id = await propose(author, { title: "Fresh crowd" });
    const crowd = await Promise.all([0, 1, 2].map((i) => joinAgent(sys, `fresh ${i}`)));
    for (const [i, a] of crowd.entries()) {
      const r = await vote(a, id, 1, NETWORKS[i]!);
      expect(r.status).toBe(200);
      expect(r.body.votes).toEqual({ for: i + 1, against: 0, score: i + 1 });
    }
    expect(await status(id)).toBe("open");

    clock.advance(HOUR + 60_000);
    // the same +1s were judged when cast: coming of age changes nothing by itself
    expect(await status(id)).toBe("open");
    for (const [i, a] of crowd.entries()) {
      expect((await vote(a, id, -1, NETWORKS[i]!)).status).toBe(200);
      expect((await vote(a, id, 1, NETWORKS[i]!)).status).toBe(200);
    }
    expect(await status(id)).toBe("agenda");
  });
});
