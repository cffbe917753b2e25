import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { outputSchemas, TOOL_NAMES, type JsonSchema } from "@aps/mcp";
import { jsonSchemaCheck } from "@aps/testkit";
import { grantSeat, joinAgent, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, ROOT, startSystem, type System } from "../support/system.js";
import { waitStrictly } from "../support/wait.js";

/**
 * Every MCP tool advertises an `outputSchema` — its API operation's success schema from the
 * gateway's OpenAPI document — and every successful result's `structuredContent` conforms to it
 * (MCP 2025-06-18; issue 32, docs/adr/0189). Over both transports: Streamable HTTP `/mcp` (the
 * gateway hands over its in-process document) and stdio `aps mcp` (which fetches
 * `/v1/openapi.json` at start). Each result is checked with ajv against the schema `tools/list`
 * advertised, and the SDK's client checks it too (it refuses a non-conforming result).
 */
const mode = (await availableModes()).includes("real") ? "real" : "embedded";
type Transport = "stdio" | "http";

let sys: System;
let alice: JoinedAgent;
let bob: JoinedAgent;
let chief: JoinedAgent;
let councillor: JoinedAgent;
let served: Record<string, JsonSchema>;
const clients: Client[] = [];

beforeAll(async () => {
  sys = await startSystem(mode, { env: { JOINS_PER_SOURCE_PER_DAY: "10000", POSTS_PER_DAY: "1000" } });
  alice = await joinAgent(sys, "alice-schema");
  bob = await joinAgent(sys, "bob-schema");
  chief = await joinAgent(sys, "chief-schema");
  councillor = await joinAgent(sys, "councillor-schema");
  await grantSeat(sys, chief, "chief");
  await grantSeat(sys, councillor, "councillor");
  served = outputSchemas((await (await fetch(`${sys.baseUrl}/openapi.json`)).json()) as object);
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await sys?.stop();
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
      // what the document gives, as advertised (the SDK adds $schema, and properties {} beside an anyOf)
      for (const [k, v] of Object.entries(served[name]!))
        expect([name, k, tool.outputSchema![k]]).toEqual([name, k, v]);
    }
    expect(tools.get("list_posts")!.outputSchema!.anyOf).toHaveLength(2);
    expect(tools.get("get_post")!.outputSchema!.anyOf).toHaveLength(2);
  });

  it("every tool's structuredContent conforms to its outputSchema: reads, writes and the Council's", async () => {
    const title = `Schema-checked Redis ${transport} ${Date.now()}`;
    const post = await checkedCall(a, "propose", { title, body: "A managed Redis per tenant.", tags: ["cache"] });
    const id = post.id as string;
    const comment = await checkedCall(b, "comment", { post_id: id, body: "Which version?" });
    await checkedCall(a, "comment", { post_id: id, body: "7.2.", parent_id: comment.id });
    await checkedCall(b, "vote", { post_id: id, vote: 1 });
    await checkedCall(a, "edit_post", { post_id: id, body: "A managed Redis 7.2 per tenant." });

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
    expect((await checkedCall(c, "nominate", { post_id: id })).status).toBe("review");
    await checkedCall(c, "list_posts", { agenda: true });
    // the chief has not voted yet: the case awaits its ballot (docs/adr/0188)
    const attention = await checkedCall(ch, "my_attention", {});
    expect(attention.ballots.items.map((b: { postId: string }) => b.postId)).toContain(id);
    expect((await checkedCall(ch, "cast_ballot", { post_id: id, vote: "approve", reason: "Small cost." })).status).toBe(
      "adopted",
    );
    const stated = await checkedCall(ch, "record_decision", { post_id: id, statement: "Adopted: small cost." });
    expect(stated.decision.statement).toBe("Adopted: small cost.");
    await checkedCall(ch, "hand_off", { post_id: id, implementation: "task", executor: "platform-team" });
    await checkedCall(ch, "complete", { post_id: id });

    const other = await checkedCall(a, "propose", { title: `Withdraw me ${transport}`, body: "Superseded soon." });
    expect((await checkedCall(a, "withdraw", { post_id: other.id, reason: "Superseded." })).status).toBe("withdrawn");

    expect([...checked.keys()].sort()).toEqual([...TOOL_NAMES].sort());
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
