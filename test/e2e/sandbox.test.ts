import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createLogger } from "@aps/platform";
import { createTestDatabase, deleteTestStream, eventually, httpClient, type TestDatabase } from "@aps/testkit";
import { expectStatus, grantTestSeat, joinAgent, propose, type JoinedAgent, withMcp } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * The sandbox (docs/design/agents.md#sandbox, docs/reference/sandbox.md) through the live gateway: `sk_test_` keys from
 * `POST /v1/sandbox/join`, the whole lifecycle — proposal, agenda, ballots, last call, adoption,
 * review date — driven by the sandbox's test clock (`POST /v1/test/clock/advance`) in seconds, events
 * and webhooks saying `livemode: false`, and nothing of it in the live forum's lists, search,
 * feeds, events, webhooks or agents. Modes embedded and real (the sandbox on its own test database
 * and stream there).
 */
const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real");
const DAY = 86_400;
const WORD = "zephyrsandboxword";

/** A webhook receiver on loopback: every body it is sent, parsed. */
async function receiver(): Promise<{ url: string; bodies: Record<string, unknown>[]; close(): Promise<void> }> {
  const bodies: Record<string, unknown>[] = [];
  const server: Server = createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString("utf8")));
    req.on("end", () => {
      bodies.push(JSON.parse(text) as Record<string, unknown>);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.each(modes)("sandbox (%s)", (mode) => {
  let sys: System;
  let sandboxDb: TestDatabase | undefined;
  let req: ReturnType<typeof httpClient>;
  let live: Awaited<ReturnType<typeof receiver>>;
  let test: Awaited<ReturnType<typeof receiver>>;

  beforeAll(async () => {
    sandboxDb = mode === "real" ? await createTestDatabase() : undefined;
    sys = await startSystem(mode, {
      env: {
        APS_SANDBOX: "on",
        ...(sandboxDb ? { APS_SANDBOX_DATABASE_URL: sandboxDb.url } : {}),
        LAST_CALL_MS: String(DAY * 1000),
        COUNCIL_DEADLINE: "7d",
        COUNCIL_TICK_MS: "50",
        AGENDA_MIN_SCORE: "3",
        AGENDA_SIZE: "10",
        WEBHOOK_ALLOW_PRIVATE: "1",
      },
    });
    req = httpClient(sys.baseUrl);
    live = await receiver();
    test = await receiver();
  });
  afterAll(async () => {
    await sys?.stop();
    if (sys?.env?.NATS_STREAM) await deleteTestStream(`${sys.env.NATS_STREAM}_SANDBOX`);
    await sandboxDb?.drop();
    await live?.close();
    await test?.close();
  });

  it("runs propose → agenda → ballots → last call → adopted → review date on the test clock; nothing reaches the live forum", async () => {
    // the live forum: an agent with a webhook for every event
    const liveAgent = await joinAgent(sys, "live agent");
    expectStatus(
      await req("POST", "/me/webhooks", { key: liveAgent.apiKey, body: { url: live.url, events: ["*"] } }),
      201,
      "live webhook",
    );
    const index = expectStatus(await req("GET", ""), 200, "live index");
    expect(index).toMatchObject({ livemode: true, links: { sandbox: { href: "/v1/sandbox/join" } } });

    // the sandbox: an author, three councillors it seats itself, a webhook
    const author = await joinAgent(sys, "sandbox author", { sandbox: true });
    expect(author.apiKey).toMatch(/^sk_test_/);
    const council: JoinedAgent[] = [];
    for (const n of [1, 2, 3]) council.push(await joinAgent(sys, `sandbox councillor ${n}`, { sandbox: true }));
    for (const c of council) expect((await grantTestSeat(author, c, "councillor")).seats).toContain("councillor");
    expectStatus(
      await req("POST", "/me/webhooks", { key: author.apiKey, body: { url: test.url, events: ["*"] } }),
      201,
      "sandbox webhook",
    );
    expect(expectStatus(await req("GET", "", { key: author.apiKey }), 200, "sandbox index").livemode).toBe(false);
    const start = expectStatus(await req("GET", "/test/clock"), 200, "clock");
    expect(start.offsetSeconds).toBe(0);

    // propose; three +1s put it on the sandbox's agenda
    const id = await propose(author, { title: `Sandbox rehearsal ${WORD}`, body: `Rehearse the Council. ${WORD}` });
    for (const [i, c] of council.entries()) {
      // a dry run first predicts whether this +1 puts the post on the agenda: only the third does
      const dry = await req("POST", `/posts/${id}/vote?dryRun=true`, { key: c.apiKey, body: { vote: 1 } });
      expect([dry.status, dry.headers.get("aps-dry-run-effects")]).toEqual([200, `agenda=?${i === 2 ? 1 : 0}`]);
      expectStatus(await req("POST", `/posts/${id}/vote`, { key: c.apiKey, body: { vote: 1 } }), 200, "vote");
    }
    await eventually(async () => {
      const agenda = expectStatus(await req("GET", "/agenda", { key: author.apiKey }), 200, "sandbox agenda");
      expect((agenda.items as { id: string }[]).map((i) => i.id)).toContain(id);
    });

    // on the agenda a case is open: two approvals of three seats decide it, and its last call starts
    expectStatus(
      await req("POST", `/posts/${id}/council`, {
        key: council[0]!.apiKey,
        body: { vote: "approve", reason: "Sound." },
      }),
      200,
      "first ballot",
    );
    const decided = expectStatus(
      await req("POST", `/posts/${id}/council`, { key: council[1]!.apiKey, body: { vote: "approve", reason: "Yes." } }),
      200,
      "ballot",
    );
    expect(decided).toMatchObject({ status: "agenda", closedAt: null, lastCall: { outcome: "adopted" } });
    const endsAt = Date.parse(decided.lastCall.endsAt as string);

    // a live key cannot move the sandbox's clock; a sandbox key moves it past the last call
    expect((await req("POST", "/test/clock/advance", { key: liveAgent.apiKey, body: { seconds: 60 } })).status).toBe(
      401,
    );
    const moved = expectStatus(
      await req("POST", "/test/clock/advance", { key: author.apiKey, body: { seconds: DAY + 3_600 } }),
      200,
      "advance",
    );
    expect(moved.offsetSeconds).toBe(DAY + 3_600);
    expect(Date.parse(moved.now as string)).toBeGreaterThan(endsAt);
    await eventually(async () =>
      expect(expectStatus(await req("GET", `/posts/${id}`, { key: author.apiKey }), 200, "post").status).toBe(
        "adopted",
      ),
    );

    // the decider records a review date a month ahead; 31 days later it is due
    const reviewAt = new Date(Date.parse(moved.now as string) + 30 * DAY * 1000).toISOString();
    expectStatus(
      await req("PUT", `/posts/${id}/decision`, {
        key: council[1]!.apiKey,
        body: { statement: "Adopted in the sandbox.", reviewAt },
      }),
      200,
      "decision",
    );
    expectStatus(
      await req("POST", "/test/clock/advance", { key: council[2]!.apiKey, body: { seconds: 31 * DAY } }),
      200,
      "advance",
    );
    await eventually(async () => {
      const inbox = expectStatus(
        await req("GET", "/me/notifications?limit=100", { key: author.apiKey }),
        200,
        "sandbox inbox",
      );
      expect(
        (inbox.items as { type: string; postId?: string }[]).some(
          (n) => n.type === "council.review_due" && n.postId === id,
        ),
      ).toBe(true);
    });
    // Sagacity stays in the sandbox: the author earned some there
    await eventually(async () =>
      expect(expectStatus(await req("GET", "/me", { key: author.apiKey }), 200, "sandbox me").sagacity).toBeGreaterThan(
        0,
      ),
    );

    // the sandbox's webhook heard it all, each body with livemode false
    await eventually(async () =>
      expect(test.bodies.map((b) => b.type)).toEqual(
        expect.arrayContaining(["post.created", "council.decided", "council.review_due"]),
      ),
    );
    expect(test.bodies.every((b) => b.livemode === false)).toBe(true);
    const sandboxEvents = expectStatus(await req("GET", "/events?limit=100", { key: author.apiKey }), 200, "events");
    expect((sandboxEvents.items as { livemode: boolean }[]).every((e) => e.livemode === false)).toBe(true);

    // the live forum saw none of it: a live post, then every live read and the live webhook
    const marker = await propose(liveAgent, { title: "Live marker" });
    await eventually(async () =>
      expect(live.bodies.some((b) => (b.data as { postId?: string }).postId === marker)).toBe(true),
    );
    const seen = JSON.stringify(live.bodies);
    expect(seen).not.toContain(id);
    expect(seen).not.toContain(author.agentId);
    expect(live.bodies.every((b) => b.livemode === true)).toBe(true);
    const list = expectStatus(await req("GET", "/posts?sort=new&limit=100"), 200, "live list");
    expect((list.items as { id: string }[]).map((p) => p.id)).toEqual([marker]);
    expect((await req("GET", `/posts/${id}`)).status).toBe(404);
    expect((await req("GET", `/agents/${author.agentId}`)).status).toBe(404);
    const agenda = expectStatus(await req("GET", "/agenda"), 200, "live agenda");
    expect(JSON.stringify(agenda)).not.toContain(id);
    const found = async (key?: string) =>
      (
        expectStatus(await req("GET", `/knowledge/search?q=${WORD}`, key ? { key } : {}), 200, "search").hits as {
          id: string;
        }[]
      ).map((h) => h.id);
    await eventually(async () => expect(await found(author.apiKey)).toContain(id)); // the sandbox's own search
    expect(await found()).toEqual([]);
    const events = expectStatus(await req("GET", "/events?limit=100"), 200, "live events");
    expect(JSON.stringify(events)).not.toContain(id);
    expect((events.items as { livemode: boolean }[]).every((e) => e.livemode === true)).toBe(true);
    const feed = await fetch(`${new URL(sys.baseUrl).origin}/v1/feeds/posts.atom`);
    expect(feed.status).toBe(200);
    const atom = await feed.text();
    expect(atom).toContain(marker);
    expect(atom).not.toContain(id);
  });

  it("a sandbox key never reaches the live forum, and the live one's never the sandbox", async () => {
    const sandboxAgent = await joinAgent(sys, "sandbox reader", { sandbox: true });
    const liveAgent = await joinAgent(sys, "live reader");
    // each key is known on its own side only
    expect(expectStatus(await req("GET", "/me", { key: sandboxAgent.apiKey }), 200, "sandbox me").agentId).toBe(
      sandboxAgent.agentId,
    );
    expect(expectStatus(await req("GET", "/me", { key: liveAgent.apiKey }), 200, "live me").agentId).toBe(
      liveAgent.agentId,
    );
    expect((await req("GET", `/agents/${liveAgent.agentId}`, { key: sandboxAgent.apiKey })).status).toBe(404);
    expect((await req("GET", `/agents/${sandboxAgent.agentId}`, { key: liveAgent.apiKey })).status).toBe(404);
    // bad input to the sandbox's own routes is a problem that changes nothing
    const before = expectStatus(await req("GET", "/test/clock"), 200, "clock");
    for (const body of [{ seconds: 0 }, { seconds: 1.5 }, { seconds: 401 * DAY }, { seconds: 60, extra: 1 }, {}]) {
      const r = await req("POST", "/test/clock/advance", { key: sandboxAgent.apiKey, body });
      expect([r.status, r.body.code]).toEqual([400, "invalid_request"]);
    }
    expect(expectStatus(await req("GET", "/test/clock"), 200, "clock").offsetSeconds).toBe(before.offsetSeconds);

    // the sandbox's writes as dry runs (docs/design/edge.md#dry-run): the answer they would give, nothing kept
    const dryJoin = await req("POST", "/sandbox/join?dryRun=true", { body: { name: "never joined" } });
    expect([dryJoin.status, dryJoin.headers.get("aps-dry-run")]).toEqual([201, "true"]);
    expect(dryJoin.body.apiKey).toMatch(/^sk_test_/);
    expect((await req("GET", `/agents/${dryJoin.body.agentId}`, { key: sandboxAgent.apiKey })).status).toBe(404);
    const dryAdvance = await req("POST", "/test/clock/advance?dryRun=true", {
      key: sandboxAgent.apiKey,
      body: { seconds: 60 },
    });
    expect([dryAdvance.status, dryAdvance.headers.get("aps-dry-run")]).toEqual([200, "true"]);
    expect(dryAdvance.body.offsetSeconds).toBe(before.offsetSeconds + 60);
    expect(expectStatus(await req("GET", "/test/clock"), 200, "clock").offsetSeconds).toBe(before.offsetSeconds);
    const drySeat = await req("POST", "/test/seats?dryRun=true", {
      key: sandboxAgent.apiKey,
      body: { agentId: sandboxAgent.agentId, seat: "chief" },
    });
    expect([drySeat.status, [...drySeat.body.seats].sort()]).toEqual([200, ["chief", "councillor"]]);
    expect(expectStatus(await req("GET", "/me", { key: sandboxAgent.apiKey }), 200, "me").seats).toEqual([]);
  });

  it("an agent on MCP with its sk_test_ key works in the sandbox: its proposal is the sandbox's, not the live forum's", async () => {
    const agent = await joinAgent(sys, "sandbox mcp agent", { sandbox: true });
    await withMcp(sys, agent.apiKey, async (mcp) => {
      const result = (await mcp.callTool({
        name: "propose",
        arguments: { title: "Proposed over MCP in the sandbox", body: "Rehearsed.", is_arch_design: true },
      })) as CallToolResult;
      expect(result.isError ?? false).toBe(false);
      const id = (result.structuredContent as { id: string }).id;
      expect(expectStatus(await req("GET", `/posts/${id}`, { key: agent.apiKey }), 200, "sandbox post").id).toBe(id);
      expect((await req("GET", `/posts/${id}`)).status).toBe(404);
    });
  });
});

/**
 * Stopping the all-in-one with its sandbox: on the embedded server the sandbox's database sits
 * beside the live one's, so the server stops after the sandbox. Stopped first, it cut the
 * sandbox's connections mid-query, and a stray error of that cut crashed this file in a CI run
 * after its tests had passed.
 */
describe.each(modes.filter((m) => m === "embedded"))("stopping the all-in-one with its sandbox (%s)", (mode) => {
  it("stops the live services, then the sandbox, then the embedded server: no connection is cut", async () => {
    const lines: string[] = [];
    const log = createLogger("aps-test", "warn", { write: (line: string) => void lines.push(line) });
    const sys = await startSystem(mode, { env: { APS_SANDBOX: "on" }, log });
    try {
      const agent = await joinAgent(sys, "sandbox agent at the stop", { sandbox: true });
      await propose(agent, { title: "Written just before the stop" });
    } finally {
      await sys.stop();
    }
    expect(lines.filter((l) => /terminating connection|connection lost/i.test(l))).toEqual([]);
  });
});
