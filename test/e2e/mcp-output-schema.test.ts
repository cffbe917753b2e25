import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { outputSchemas, TOOL_NAMES, type JsonSchema } from "@aps/mcp";
import { jsonSchemaCheck } from "@aps/testkit";
import { startApertium, type Apertium } from "../support/apertium.js";
import { grantSeat, joinAgent, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, ROOT, startSystem, type System } from "../support/system.js";
import { waitStrictly } from "../support/wait.js";

/**
 * Every MCP tool advertises an `outputSchema` — the lean form of its API operations' success
 * schemas from the gateway's OpenAPI document — and every successful result's `structuredContent`
 * conforms to it (MCP 2025-06-18; docs/reference/mcp.md "Results"); every tool and every action
 * of `council` and `webhooks` is called. Over both transports: Streamable HTTP `/mcp` (the
 * gateway hands over its in-process document) and stdio `aps mcp` (which fetches
 * `/v1/openapi.json` at start). Each result is checked with ajv against the schema `tools/list`
 * advertised, and the SDK's client checks it too (it refuses a non-conforming result).
 */
const mode = (await availableModes()).includes("real") ? "real" : "embedded";
type Transport = "stdio" | "http";
const wrapped = (t: string) => `<untrusted-user-content>${t}</untrusted-user-content>`;

let sys: System;
let alice: JoinedAgent;
let bob: JoinedAgent;
let chief: JoinedAgent;
let councillor: JoinedAgent;
let served: Record<string, JsonSchema>;
const clients: Client[] = [];
/** A loopback site: alice's owner file (for verify_owner) and a webhook receiver answering 200. */
let site: Server;
let siteUrl = "";
let hooksReceived = 0;
/** A real Apertium APY for `translate`; undefined where it is not installed (the tool is then not checked, loudly). */
let apertium: Apertium | undefined;

beforeAll(async () => {
  // WEBHOOK_ALLOW_PRIVATE: the webhook and owner-file requests go to this loopback site
  apertium = await startApertium();
  const engine: Record<string, string> = apertium ? { TRANSLATION_ENGINE: "apertium", APERTIUM_URL: apertium.url } : {};
  sys = await startSystem(mode, {
    env: { JOINS_PER_SOURCE_PER_DAY: "10000", POSTS_PER_DAY: "1000", WEBHOOK_ALLOW_PRIVATE: "1", ...engine },
  });
  alice = await joinAgent(sys, "alice-schema");
  bob = await joinAgent(sys, "bob-schema");
  chief = await joinAgent(sys, "chief-schema");
  councillor = await joinAgent(sys, "councillor-schema");
  await grantSeat(sys, chief, "chief");
  await grantSeat(sys, councillor, "councillor");
  site = createServer((req, res) => {
    if (req.url === "/.well-known/aps-agent.json")
      return void res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ agentId: alice.agentId }));
    if (req.method === "POST" && req.url === "/hook") hooksReceived++;
    req.resume();
    res.writeHead(200).end();
  });
  await new Promise<void>((r) => site.listen(0, "127.0.0.1", r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  served = outputSchemas((await (await fetch(`${sys.baseUrl}/openapi.json`)).json()) as object);
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await sys?.stop();
  await apertium?.stop();
  site?.closeAllConnections();
  await new Promise<void>((r) => (site ? site.close(() => r()) : r()));
});

/** An MCP client of the SDK over `transport` with `key`, as test/e2e/mcp.test.ts connects. */
async function connect(transport: Transport, key: string): Promise<Client> {
  const client = new Client({ name: "aps-e2e-schema", version: "1.0.0" });
  if (transport === "stdio")
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(ROOT, "services/cli/dist/main.js"), "mcp"],
        env: { PATH: process.env.PATH ?? "", APS_URL: sys.baseUrl, APS_API_KEY: key },
        stderr: "pipe",
      }),
    );
  else
    await client.connect(
      new StreamableHTTPClientTransport(new URL(sys.baseUrl.replace(/\/v1$/, "/mcp")), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
  clients.push(client);
  return client;
}

describe("the tools' outputSchema from the served OpenAPI document", () => {
  it("covers every tool, type object at the top, each compiling with ajv", () => {
    expect(Object.keys(served).sort()).toEqual([...TOOL_NAMES].sort());
    for (const [name, schema] of Object.entries(served)) {
      expect([name, schema.type]).toEqual([name, "object"]);
      expect(() => jsonSchemaCheck(schema)).not.toThrow();
    }
  });
});

describe.each<Transport>(["stdio", "http"])(`MCP outputSchema over %s (${mode})`, (transport) => {
  let tools: Map<string, Tool>;
  /** Calls checked, by tool. */
  const checked = new Map<string, number>();
  let a: Client;
  let b: Client;

  beforeAll(async () => {
    a = await connect(transport, alice.apiKey);
    b = await connect(transport, bob.apiKey);
    const listed = await a.listTools();
    tools = new Map(listed.tools.map((t) => [t.name, t]));
    console.log(
      `tools/list over ${transport}: ${Buffer.byteLength(JSON.stringify(listed))} bytes, ${tools.size} tools`,
    );
    await b.listTools(); // the SDK client checks structuredContent only against schemas it has listed
  });

  /**
   * Calls `name` and checks the result: a success, with `structuredContent` that conforms (ajv)
   * to the advertised outputSchema; answers the structuredContent.
   */
  async function checkedCall(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
    const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
    const text = r.content[0]?.type === "text" ? r.content[0].text : "";
    expect([name, r.isError ?? false, text.slice(0, 200)]).toEqual([name, false, text.slice(0, 200)]);
    expect([name, typeof r.structuredContent]).toEqual([name, "object"]);
    const problems = jsonSchemaCheck(tools.get(name)!.outputSchema!)(r.structuredContent);
    expect([name, problems]).toEqual([name, []]);
    checked.set(name, (checked.get(name) ?? 0) + 1);
    return r.structuredContent;
  }

  it("lists every tool with the outputSchema built from the served document", () => {
    expect([...tools.keys()].sort()).toEqual([...TOOL_NAMES].sort());
    for (const [name, tool] of tools) {
      expect([name, tool.outputSchema?.type]).toEqual([name, "object"]);
      // what the document gives, as advertised
      for (const [k, v] of Object.entries(served[name]!))
        expect([name, k, tool.outputSchema![k]]).toEqual([name, k, v]);
    }
    expect(tools.get("list_posts")!.outputSchema!.anyOf).toHaveLength(5); // posts, agenda = decisions, tags, council, audit
    expect(tools.get("get_post")!.outputSchema!.anyOf).toHaveLength(2);
    expect(tools.get("council")!.outputSchema!.anyOf).toBeUndefined(); // every action answers the case
  });

  it("every tool's structuredContent conforms to its outputSchema: reads, writes and the Council's", async () => {
    const title = `Schema-checked Redis ${transport} ${Date.now()}`;
    const post = await checkedCall(a, "propose", {
      title,
      body: "A managed Redis per tenant.",
      is_arch_design: true,
      tags: ["cache"],
    });
    const id = post.id as string;
    const comment = await checkedCall(b, "comment", { post_id: id, body: "Which version?" });
    const reply = await checkedCall(a, "comment", { post_id: id, body: "7.2.", parent_id: comment.id });
    await checkedCall(b, "vote", { post_id: id, vote: 1 });
    await checkedCall(a, "edit", { post_id: id, body: "A managed Redis 7.2 per tenant." });
    expect((await checkedCall(a, "edit", { comment_id: reply.id, body: "7.2, the latest." })).revision).toBe(2);
    expect((await checkedCall(b, "revisions", { post_id: id })).items).toHaveLength(2);
    expect((await checkedCall(b, "revisions", { comment_id: reply.id })).items).toHaveLength(2);
    if (apertium) {
      const english = await checkedCall(a, "propose", {
        title: `Translate me ${transport}`,
        body: "This proposal describes how the platform team will run a managed cache for every tenant, with clear limits and a plan to roll it back.",
        is_arch_design: false,
      });
      expect((await checkedCall(b, "translate", { post_id: english.id, lang: "es" })).lang).toBe("es");
    } else console.warn("[mcp-output-schema] NO APERTIUM APY: translate's outputSchema is NOT CHECKED");
    await checkedCall(b, "watch", { post_id: id, level: "watching" });
    expect((await checkedCall(b, "flag", { comment_id: reply.id, reason: "other", text: "Checking." })).reason).toBe(
      "other",
    );
    await checkedCall(b, "list_events", { limit: 5 });
    for (const view of ["agenda", "decisions", "tags", "council"]) await checkedCall(b, "list_posts", { view });
    expect((await checkedCall(a, "verify_owner", { url: `${siteUrl}/about` })).verified.domain).toBe("127.0.0.1");

    const detail = await checkedCall(b, "get_post", { post_id: id });
    expect(detail.id).toBe(id);
    const page = (await (await fetch(`${sys.baseUrl}/posts/${id}/comments?limit=1`)).json()) as { nextCursor: string };
    expect(typeof page.nextCursor).toBe("string");
    const comments = await checkedCall(b, "get_post", { post_id: id, comments_cursor: page.nextCursor });
    expect(comments.items.length).toBeGreaterThan(0);
    const listed = await checkedCall(b, "list_posts", { kind: "arch", sort: "new", limit: 5 });
    expect(listed.items.length).toBeGreaterThan(0);

    const hasPost = (r: { hits: { id?: string }[] }) => r.hits.some((x) => x.id === id);
    let found: any = { hits: [] };
    await waitStrictly(
      "find_similar to find the post",
      async () => hasPost((found = await checkedCall(b, "find_similar", { title, body: "managed Redis" }))),
      { timeoutMs: 10_000, intervalMs: 200, show: () => found },
    );
    expect(hasPost(found)).toBe(true);
    await checkedCall(b, "search_knowledge", { q: "Redis", tags: ["post"] });
    await checkedCall(a, "my_status", {});

    let inbox: any = { items: [] };
    await waitStrictly(
      "an item in the author's my_notifications",
      async () => (inbox = await checkedCall(a, "my_notifications", { limit: 100 })).items.length > 0,
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    expect(inbox.items.length).toBeGreaterThan(0);
    expect((await checkedCall(a, "my_notifications", { limit: 100, mark_read: true })).unread).toBe(0);

    // the Council: nominate (review, one of two seats), the agenda, a ballot adopts, hand-off, complete
    const c = await connect(transport, councillor.apiKey);
    const ch = await connect(transport, chief.apiKey);
    await Promise.all([c.listTools(), ch.listTools()]);
    expect((await checkedCall(c, "council", { action: "nominate", post_id: id })).status).toBe("review");
    await checkedCall(c, "list_posts", { view: "agenda" });
    // the chief has not voted yet: the case awaits its ballot (docs/design/agents.md#attention)
    const attention = await checkedCall(ch, "my_attention", {});
    expect(attention.ballots.items.map((b: { postId: string }) => b.postId)).toContain(id);
    const ballot = { action: "ballot", post_id: id, vote: "approve", reason: "Small cost." };
    expect((await checkedCall(ch, "council", ballot)).status).toBe("adopted");
    const stated = await checkedCall(ch, "council", {
      action: "decision",
      post_id: id,
      statement: "Adopted: small cost.",
    });
    // participant text; wrapped, since this connection has not yet learnt that the chief is its caller
    expect(stated.decision.statement).toBe(wrapped("Adopted: small cost."));
    await checkedCall(ch, "council", {
      action: "handoff",
      post_id: id,
      implementation: "task",
      executor: "platform-team",
    });
    await checkedCall(ch, "council", { action: "complete", post_id: id });

    // webhooks: create, list, get, ping, its delivery, redeliver, rotate the secret, delete
    const hook = await checkedCall(a, "webhooks", {
      action: "create",
      url: `${siteUrl}/hook`,
      events: ["post.created"],
    });
    expect(typeof hook.secret).toBe("string");
    expect((await checkedCall(a, "webhooks", { action: "list" })).items.map((w: { id: string }) => w.id)).toContain(
      hook.id,
    );
    await checkedCall(a, "webhooks", { action: "get", webhook_id: hook.id });
    await checkedCall(a, "webhooks", { action: "ping", webhook_id: hook.id });
    let deliveries: any = { items: [] };
    await waitStrictly(
      "the ping's delivery",
      async () =>
        (deliveries = await checkedCall(a, "webhooks", { action: "deliveries", webhook_id: hook.id })).items.some(
          (d: { deliveredAt: unknown }) => d.deliveredAt,
        ),
      { timeoutMs: 20_000, intervalMs: 200, show: () => deliveries },
    );
    const delivery = deliveries.items[0].id as string;
    await checkedCall(a, "webhooks", { action: "redeliver", webhook_id: hook.id, delivery_id: delivery });
    await checkedCall(a, "webhooks", { action: "rotate_secret", webhook_id: hook.id });
    await checkedCall(a, "webhooks", { action: "delete", webhook_id: hook.id });
    expect(hooksReceived).toBeGreaterThan(0);

    const other = await checkedCall(a, "propose", {
      title: `Withdraw me ${transport}`,
      body: "Superseded soon.",
      is_arch_design: true,
    });
    expect((await checkedCall(a, "withdraw", { post_id: other.id, reason: "Superseded." })).status).toBe("withdrawn");

    expect([...checked.keys()].sort()).toEqual(TOOL_NAMES.filter((t) => apertium || t !== "translate").sort());
  });

  it("an error result carries no structuredContent and the client takes it (isError)", async () => {
    const r = (await a.callTool({
      name: "get_post",
      arguments: { post_id: "p_01JWQYPV8RRNPMN5REKHSD503J" },
    })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
  });
});
