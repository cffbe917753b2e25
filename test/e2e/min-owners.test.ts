import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { httpClient } from "@aps/testkit";
import { grantSeat, joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { startSystem, type System } from "../support/system.js";

/**
 * Operator-diverse adoption through HTTP (docs/reference/council.md "Closing a case", rule 5;
 * docs/design/council.md#operator-diverse-adoption), with `COUNCIL_MIN_OWNERS=2`: councillors
 * whose records are verified for one domain approve a case — an approval majority of its seats —
 * and it stays in review with no last call; the approval of a councillor of a second verified
 * domain adopts it. Two owner sites on loopback, 127.0.0.1 and 127.0.0.2 (two domains), serve
 * `/.well-known/aps-agent.json` (WEBHOOK_ALLOW_PRIVATE=1, as test/agents/verified-owners.test.ts).
 * `BALLOT_SEALING=until_vote`: the approving-owner count is sealed with the positions (null for an
 * anonymous reader), visible to a councillor who has cast one. Embedded: the rule lives in the
 * council service and the gateway, which every mode runs alike.
 */
const TIMEOUT_MS = 120_000;

/** An owner site on `host` (a loopback address) naming `agents` at the well-known path. */
async function ownerSite(host: string) {
  const site = { agents: [] as string[], url: "", server: undefined as unknown as Server };
  site.server = createServer((req, res) => {
    if (req.url !== "/.well-known/aps-agent.json") return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ agents: site.agents }));
  });
  await new Promise<void>((r) => site.server.listen(0, host, r));
  site.url = `http://${host}:${(site.server.address() as AddressInfo).port}/about`;
  return site;
}

describe("operator-diverse adoption: COUNCIL_MIN_OWNERS=2 (embedded)", () => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let alpha: Awaited<ReturnType<typeof ownerSite>>;
  let beta: Awaited<ReturnType<typeof ownerSite>>;
  let a1: JoinedAgent, a2: JoinedAgent, a3: JoinedAgent, b1: JoinedAgent;

  beforeAll(async () => {
    sys = await startSystem("embedded", {
      env: {
        COUNCIL_MIN_OWNERS: "2",
        BALLOT_SEALING: "until_vote",
        WEBHOOK_ALLOW_PRIVATE: "1",
        OWNER_CHECK_TIMEOUT_MS: "2000",
        AGENDA_MIN_SCORE: "1000",
        JOINS_PER_SOURCE_PER_DAY: "100",
        POSTS_PER_DAY: "100",
      },
    });
    req = httpClient(sys.baseUrl);
    alpha = await ownerSite("127.0.0.1");
    beta = await ownerSite("127.0.0.2");
    a1 = await joinAgent(sys, "alpha one", { url: alpha.url });
    a2 = await joinAgent(sys, "alpha two", { url: alpha.url });
    a3 = await joinAgent(sys, "alpha three", { url: alpha.url });
    b1 = await joinAgent(sys, "beta one", { url: beta.url });
    alpha.agents = [a1.agentId, a2.agentId, a3.agentId];
    beta.agents = [b1.agentId];
    for (const [c, domain] of [
      [a1, "127.0.0.1"],
      [a2, "127.0.0.1"],
      [a3, "127.0.0.1"],
      [b1, "127.0.0.2"],
    ] as const) {
      const v = await req("POST", "/me/verification", { key: c.apiKey });
      expect([v.status, v.body.verified?.domain]).toEqual([200, domain]);
      await grantSeat(sys, c, "councillor");
    }
  }, TIMEOUT_MS);
  afterAll(async () => {
    for (const s of [alpha, beta]) {
      s?.server.closeAllConnections();
      await new Promise((r) => s?.server.close(r));
    }
    await sys?.stop();
  });

  const approve = (c: JoinedAgent, id: string) =>
    req("POST", `/posts/${id}/council`, { key: c.apiKey, body: { vote: "approve", reason: `${c.name} approves` } });

  it("approvals of one verified owner keep the case in review; a second owner's approval adopts it", async () => {
    const author = await joinAgent(sys, "mo author");
    const id = await propose(author, { title: "Two owners or none" });
    const nominated = await req("POST", `/posts/${id}/nominate`, { key: a1.apiKey });
    expect(nominated.body).toMatchObject({ status: "review", seats: 4, minOwners: 2, approvingOwners: 1 });
    expect((await approve(a2, id)).status).toBe(200);
    // 3 of 4 seats approve: a majority that would adopt without the rule — but one owner
    const held = await approve(a3, id);
    expect(held.status).toBe(200);
    expect(held.body).toMatchObject({
      status: "review",
      closedAt: null,
      lastCall: null,
      approvals: 3,
      approvingOwners: 1,
      minOwners: 2,
      eligibleSeats: 4,
    });
    // an anonymous reader sees the rule but not the count: it is sealed with the positions
    const anon = (await req("GET", `/posts/${id}`)).body;
    expect(anon).toMatchObject({ status: "review" });
    expect(anon.council).toMatchObject({ sealed: true, approvals: null, approvingOwners: null, minOwners: 2 });
    // the second owner's approval adopts (LAST_CALL_MS 0 in test systems: at once)
    const adopted = await approve(b1, id);
    expect(adopted.body).toMatchObject({
      status: "adopted",
      approvals: 4,
      approvingOwners: 2,
      minOwners: 2,
      decidedBy: b1.agentId,
    });
    expect((await req("GET", `/posts/${id}`)).body.council).toMatchObject({
      sealed: false,
      approvingOwners: 2,
      minOwners: 2,
    });
  });
});
