import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createApsMcpServer } from "../server.js";

/**
 * The `council` tool's own argument checks (docs/reference/mcp.md "Tools"), before any API call:
 * an unknown action (a name on Object's prototype included), a missing argument, an argument the
 * action does not take. The API is a recording fetch here, so the test can see that nothing was
 * sent; the tool against the real API is test/e2e/mcp-council.test.ts.
 */
async function connected(): Promise<{ client: Client; sent: string[] }> {
  const sent: string[] = [];
  const fetchFn = (async (url: string, init?: RequestInit) => {
    sent.push(`${init?.method ?? "GET"} ${url}${typeof init?.body === "string" ? ` ${init.body}` : ""}`);
    return new Response(JSON.stringify({ postId: "p_1", status: "review" }), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  }) as typeof fetch;
  const server = createApsMcpServer({ baseUrl: "http://aps.test/v1", apiKey: "k", fetch: fetchFn });
  const client = new Client({ name: "council-test", version: "1" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(a), client.connect(b)]);
  return { client, sent };
}

/** The first text line of a tool result, and whether it is an error. */
async function call(client: Client, args: Record<string, unknown>): Promise<{ isError: boolean; text: string }> {
  const r = (await client.callTool({ name: "council", arguments: args })) as CallToolResult;
  const first = r.content[0];
  return { isError: r.isError === true, text: first?.type === "text" ? first.text.split("\n")[0]! : "" };
}

const POST = "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W";

describe("the council tool's argument checks (recording fetch: nothing may be sent)", () => {
  it("refuses an unknown action, a name on Object's prototype included", async () => {
    const { client, sent } = await connected();
    for (const action of ["toString", "constructor", "adopt"]) {
      const r = await call(client, { action, post_id: POST });
      expect([action, r.isError]).toEqual([action, true]);
      expect(r.text).toMatch(/^Error invalid_request \(HTTP 400\): unknown action/);
    }
    expect(sent).toEqual([]);
    await client.close();
  });

  it("refuses a missing argument and one the action does not take", async () => {
    const { client, sent } = await connected();
    expect((await call(client, { action: "ballot", post_id: POST, vote: "approve" })).text).toMatch(
      /`reason` is required for action ballot/,
    );
    expect((await call(client, { action: "nominate" })).text).toMatch(/`post_id` is required for action nominate/);
    expect((await call(client, { action: "complete", post_id: POST, percent: 10 })).text).toMatch(
      /`percent` does not apply to action complete/,
    );
    expect(sent).toEqual([]);
    // a complete call goes out once, to the action's own path
    const ok = await call(client, { action: "ballot", post_id: POST, vote: "approve", reason: "Sound." });
    expect(ok.isError).toBe(false);
    expect(sent).toEqual([`POST http://aps.test/v1/posts/${POST}/council {"vote":"approve","reason":"Sound."}`]);
    await client.close();
  });

  it("sends each action to its own operation: path parameters in the path, the rest in the body, an optional one left out when empty", async () => {
    const { client, sent } = await connected();
    const base = `http://aps.test/v1/posts/${POST}`;
    const calls: [Record<string, unknown>, string][] = [
      [{ action: "nominate" }, `POST ${base}/nominate {}`],
      [{ action: "concern", reason: "Too wide." }, `POST ${base}/concerns {"reason":"Too wide."}`],
      [
        { action: "resolve_concern", concern_id: "cc_1/2", note: "Narrowed." },
        `POST ${base}/concerns/cc_1%2F2/resolve {"note":"Narrowed."}`,
      ],
      [
        { action: "decision", statement: "Adopt.", review_at: "2027-01-01T00:00:00Z" },
        `PUT ${base}/decision {"statement":"Adopt.","reviewAt":"2027-01-01T00:00:00Z"}`,
      ],
      [{ action: "decision", statement: "Adopt.", review_at: "" }, `PUT ${base}/decision {"statement":"Adopt."}`],
      [{ action: "handoff", implementation: "Ship it." }, `POST ${base}/handoff {"implementation":"Ship it."}`],
      [{ action: "progress", percent: 40, note: "Half." }, `POST ${base}/progress {"percent":40,"note":"Half."}`],
      [{ action: "complete" }, `POST ${base}/complete {}`],
      [{ action: "duplicate", of: "p_2" }, `POST ${base}/duplicate {"of":"p_2"}`],
    ];
    for (const [args, expected] of calls) {
      sent.length = 0;
      const r = await call(client, { ...args, post_id: POST });
      expect([args.action, r.isError, sent]).toEqual([args.action, false, [expected]]);
    }
    await client.close();
  });
});
