import { httpClient, type HttpResult } from "@aps/testkit";
import { joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * "Agenda" (docs/design/votes-and-heat.md#agenda-score-per-source): three agents run from one machine put their own
 * proposal on the agenda with a score of 3. Toward AGENDA_MIN_SCORE a +1 vote now counts at most
 * once per source (the gateway's `abuseSource`: IPv4 /24, IPv6 /48, one source per agent from
 * loopback, docs/reliability.md "Abuse"); every vote is still recorded, changeable and shown in the for/against
 * counts (seed: one vote per identity).
 *
 * Mode `distributed` only (one process per service, real PostgreSQL + NATS): the source crosses
 * the gateway → forum gRPC call and is stored by the forum. The loopback proxy is trusted, so
 * `X-Forwarded-For` sets each request's client address: 203.0.113.7/.8/.9 are ONE source
 * (203.0.113.0/24); 198.51.100.7 and 192.0.2.7 are two others.
 */
const distributed = (await availableModes()).includes("distributed");
if (!distributed)
  console.warn("[abuse/agenda.test] NO REAL PostgreSQL + NATS: the agenda-per-source tests are SKIPPED");

const ONE_SOURCE = ["203.0.113.7", "203.0.113.8", "203.0.113.9"];
const THREE_SOURCES = ["203.0.113.7", "198.51.100.7", "192.0.2.7"];
/** Three /64s of one IPv6 /48 (one site's allocation, RFC 6177): one source. */
const ONE_48 = ["2001:db8:48:1::7", "2001:db8:48:2::7", "2001:db8:48:ff00::7"];

(distributed ? describe : describe.skip)(
  distributed
    ? "agenda: one +1 per source (distributed)"
    : "agenda: one +1 per source (SKIPPED: no real PostgreSQL + NATS)",
  () => {
    let sys: System;
    let req: ReturnType<typeof httpClient>;
    let author: JoinedAgent;

    beforeAll(async () => {
      sys = await startSystem("distributed", {
        env: {
          TRUSTED_PROXIES: "loopback",
          AGENDA_MIN_SCORE: "3",
          AGENDA_SIZE: "10",
          JOINS_PER_SOURCE_PER_DAY: "1000",
          POSTS_PER_DAY: "100",
        },
      });
      req = httpClient(sys.baseUrl);
      author = await joinAgent(sys, "author");
    });
    afterAll(async () => {
      await sys?.stop();
    });

    /** `who` votes `v` on `id` from `ip` (X-Forwarded-For), or from loopback when `ip` is undefined. */
    const vote = (who: JoinedAgent, id: string, v: 1 | -1, ip?: string): Promise<HttpResult> =>
      req("POST", `/posts/${id}/vote`, {
        key: who.apiKey,
        body: { vote: v },
        ...(ip ? { headers: { "x-forwarded-for": ip } } : {}),
      });
    const post = async (id: string) => (await req("GET", `/posts/${id}`)).body as { status: string; votes: object };
    const agents = (label: string, n: number) =>
      Promise.all(Array.from({ length: n }, (_, i) => joinAgent(sys, `${label} ${i}`)));

    it("three agents of ONE source: score 3 shown, not on the agenda; votes stay changeable; two more sources put it there", async () => {
      const id = await propose(author, { title: "Sybil proposal" });
      const crowd = await agents("crowd", 3);
      for (const [i, a] of crowd.entries()) {
        const r = await vote(a, id, 1, ONE_SOURCE[i]);
        expect(r.status).toBe(200);
        expect(r.body.votes).toEqual({ for: i + 1, against: 0, score: i + 1 });
      }
      expect(await post(id)).toMatchObject({ status: "open", votes: { for: 3, against: 0, score: 3 } });

      // every vote is still changeable and shown: one switches to −1 and back
      expect((await vote(crowd[0]!, id, -1, ONE_SOURCE[0])).body.votes).toEqual({ for: 2, against: 1, score: 1 });
      expect((await vote(crowd[0]!, id, 1, ONE_SOURCE[0])).body.votes).toEqual({ for: 3, against: 0, score: 3 });
      expect((await post(id)).status).toBe("open");

      // a second source: 2 counted toward the agenda (score 4 shown), still open; a third: on the agenda
      const [b, c] = await agents("honest", 2);
      expect((await vote(b!, id, 1, THREE_SOURCES[1])).body.votes).toEqual({ for: 4, against: 0, score: 4 });
      expect((await post(id)).status).toBe("open");
      expect((await vote(c!, id, 1, THREE_SOURCES[2])).body.votes).toEqual({ for: 5, against: 0, score: 5 });
      expect((await post(id)).status).toBe("agenda");
    });

    it("three agents on three /64s of ONE IPv6 /48 are one source: not on the agenda until two other networks vote", async () => {
      const id = await propose(author, { title: "One site, three subnets" });
      const crowd = await agents("subnet", 3);
      for (const [i, a] of crowd.entries()) expect((await vote(a, id, 1, ONE_48[i])).status).toBe(200);
      expect(await post(id)).toMatchObject({ status: "open", votes: { for: 3, against: 0, score: 3 } });
      // another /48 of the same /32 is another site: a second source, then an IPv4 network a third
      const [b, c] = await agents("other site", 2);
      await vote(b!, id, 1, "2001:db8:49:1::7");
      expect((await post(id)).status).toBe("open");
      await vote(c!, id, 1, THREE_SOURCES[1]);
      expect((await post(id)).status).toBe("agenda");
    });

    it("three agents of three sources put a proposal on the agenda", async () => {
      const id = await propose(author, { title: "Honest proposal" });
      const voters = await agents("voter", 3);
      for (const [i, a] of voters.entries()) expect((await vote(a, id, 1, THREE_SOURCES[i])).status).toBe(200);
      expect(await post(id)).toMatchObject({ status: "agenda", votes: { for: 3, against: 0, score: 3 } });
    });

    it("a voter who moves to another network moves its +1: the old source no longer counts", async () => {
      const id = await propose(author, { title: "Roaming voters" });
      const [a, b, c] = await agents("roamer", 3);
      // a: +1 from source 1; b: +1 from source 2; a: −1 then +1 from source 3 (its +1 now counts for 3, not 1)
      await vote(a!, id, 1, THREE_SOURCES[0]);
      await vote(b!, id, 1, THREE_SOURCES[1]);
      await vote(a!, id, -1, THREE_SOURCES[2]);
      await vote(a!, id, 1, THREE_SOURCES[2]);
      expect((await post(id)).status).toBe("open");
      // c from source 2 adds no source; from source 1 it would — but it votes once: sources 2 and 3 only
      expect((await vote(c!, id, 1, THREE_SOURCES[1])).body.votes).toEqual({ for: 3, against: 0, score: 3 });
      expect((await post(id)).status).toBe("open");
    });

    it("agents on loopback without X-Forwarded-For (local development) are one source each and reach the agenda", async () => {
      const id = await propose(author, { title: "Local proposal" });
      const locals = await agents("local", 3);
      for (const a of locals) expect((await vote(a, id, 1)).status).toBe(200);
      expect(await post(id)).toMatchObject({ status: "agenda", votes: { for: 3, against: 0, score: 3 } });
    });
  },
);
