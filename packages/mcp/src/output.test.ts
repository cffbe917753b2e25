import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ApsApi } from "./api.js";
import { jsonSchemaCheck } from "@aps/testkit";
import {
  OUTPUT_DEPTH,
  OutputSchemaError,
  outputSchemas,
  TOOL_OUTPUTS,
  type JsonSchema,
  type ToolName,
} from "./output.js";
import { compactToolsList } from "./tools-list.js";
import { registerTools, TOOL_NAMES } from "./tools.js";

/**
 * Tools' `outputSchema` from an OpenAPI document (docs/reference/mcp.md "Results"): lean (references
 * inlined, the answer's fields typed to OUTPUT_DEPTH), `anyOf` for a tool of several operations,
 * `type: object` at the top, and none missing; `tools/list` without the SDK's empty keywords. The
 * real document is checked end to end in test/e2e/mcp-output-schema.test.ts.
 */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const closed = (properties: Record<string, unknown>) => ({
  type: "object",
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

/** A small OpenAPI document with every operation the tools call: each answers `Thing`, except those below. */
function fakeDocument(): { paths: Record<string, Record<string, unknown>>; components: { schemas: JsonSchema } } {
  const paths: Record<string, Record<string, unknown>> = {};
  const answer = (schema: unknown, status = "200") => ({
    responses: {
      [status]: { content: { "application/json": { schema } } },
      "400": { content: { "application/problem+json": { schema: ref("Problem") } } },
    },
  });
  for (const out of Object.values(TOOL_OUTPUTS))
    for (const op of "ops" in out ? out.ops : Object.values(out.fields).filter(Array.isArray))
      (paths[op[1] as string] ??= {})[op[0] as string] = answer(ref("Thing"));
  paths["/v1/posts"]!.get = answer(ref("Page"));
  paths["/v1/agenda"]!.get = answer(ref("Agenda"));
  paths["/v1/posts"]!.post = answer(ref("Thing"), "201");
  paths["/v1/me"]!.get = answer(closed({ agentId: { type: "string" } }));
  return {
    paths,
    components: {
      schemas: {
        Problem: closed({ code: { type: "string" } }),
        Thing: closed({
          id: { type: "string", example: "t_1" },
          example: { type: "integer" }, // a property named like the keyword stays
          author: ref("Author"),
          kids: { type: "array", items: ref("Thing") },
        }),
        Author: closed({ agentId: { type: "string" }, votes: { anyOf: [ref("Votes"), { type: "null" }] } }),
        Votes: closed({ for: { type: "integer" }, against: { type: "integer" } }),
        Page: closed({ items: { type: "array", items: ref("Author") }, nextCursor: { type: ["string", "null"] } }),
        Agenda: closed({ items: { type: "array", items: { type: "string", enum: ["#/components/schemas/x"] } } }),
      },
    },
  };
}

describe("outputSchemas", () => {
  it("gives one operation's success schema, lean: references inlined, the answer's fields typed, records below them only typed", () => {
    const vote = outputSchemas(fakeDocument()).vote;
    expect(vote).toEqual({
      type: "object",
      properties: {
        id: { type: "string" }, // OpenAPI's `example` left out
        example: { type: "integer" }, // a property named like the keyword stays
        author: { type: "object" }, // a record at level OUTPUT_DEPTH: its type only
        kids: { type: "array", items: { type: "object" } },
      },
    });
    expect(OUTPUT_DEPTH).toBe(1);
    expect(JSON.stringify(vote)).not.toContain("#/components/");
  });

  it("is looser than the document's schema, never stricter: what conforms there conforms here", () => {
    const doc = fakeDocument();
    const vote = outputSchemas(doc).vote;
    const answer = { id: "t", example: 1, author: { agentId: "ext_1", votes: null }, kids: [], later: "a new field" };
    expect(jsonSchemaCheck(vote)(answer)).toEqual([]);
    expect(jsonSchemaCheck(vote)({ ...answer, id: 7 }).length).toBeGreaterThan(0);
  });

  it("gives anyOf for a tool of several operations (each distinct answer once); a page's items are described as an answer", () => {
    const list = outputSchemas(fakeDocument()).list_posts;
    expect(list.type).toBe("object");
    const [page, agenda, thing] = list.anyOf as JsonSchema[];
    expect((list.anyOf as unknown[]).length).toBe(3); // posts, agenda, then decisions, tags and council: one Thing
    expect(page).toEqual({
      type: "object",
      properties: {
        items: {
          type: "array",
          items: {
            type: "object",
            properties: { agentId: { type: "string" }, votes: { anyOf: [{ type: "object" }, { type: "null" }] } },
          },
        },
        nextCursor: { type: ["string", "null"] },
      },
    });
    // data keywords kept as they are
    expect(agenda).toEqual({
      type: "object",
      properties: { items: { type: "array", items: { type: "string", enum: ["#/components/schemas/x"] } } },
    });
    expect(thing?.properties).toHaveProperty("kids");
  });

  it("gives my_status's {me, quotas, skillVersion} as one closed object", () => {
    const status = outputSchemas(fakeDocument()).my_status;
    expect(status).toMatchObject({
      type: "object",
      required: ["me", "quotas", "skillVersion"],
      additionalProperties: false,
      properties: {
        me: { type: "object" },
        quotas: { type: "object" },
        skillVersion: { type: ["integer", "null"] },
      },
    });
  });

  it("covers every tool, and is built once per document", () => {
    const doc = fakeDocument();
    const schemas = outputSchemas(doc);
    expect(Object.keys(schemas).sort()).toEqual([...TOOL_NAMES].sort());
    for (const s of Object.values(schemas)) expect(s.type).toBe("object");
    expect(outputSchemas(doc)).toBe(schemas);
  });

  it("names the tool and the operation the document lacks, and a $ref without a target", () => {
    const doc = fakeDocument();
    delete doc.paths["/v1/posts/{id}/vote"];
    expect(() => outputSchemas(doc)).toThrow(OutputSchemaError);
    expect(() => outputSchemas(doc)).toThrow("tool vote: the API document has no operation POST /v1/posts/{id}/vote");
    const noTarget = fakeDocument();
    delete noTarget.components.schemas.Votes;
    expect(() => outputSchemas(noTarget)).toThrow(/\$ref #\/components\/schemas\/Votes has no target/);
  });
});

describe("tools/list with the document", () => {
  /**
   * A client connected to a server over `fetch`'s API, with the fake document's output schemas
   * (its operations have no request schemas: the arguments are the loose ones of no document).
   */
  async function connected(fetchFn: typeof fetch): Promise<Client> {
    const server = new McpServer({ name: "aps", version: "1.0.0" });
    registerTools(
      server,
      new ApsApi({ baseUrl: "http://aps.test/v1", apiKey: "k", fetch: fetchFn }),
      outputSchemas(fakeDocument()),
    );
    compactToolsList(server);
    const client = new Client({ name: "out", version: "1" });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(a), client.connect(b)]);
    return client;
  }
  const answering = (body: unknown) =>
    (async () =>
      new Response(JSON.stringify(body), {
        status: 200,
        headers: { "content-type": "application/json" },
      })) as typeof fetch;

  it("advertises an outputSchema of type object on every tool, without the SDK's empty keywords", async () => {
    const client = await connected(answering({}));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    for (const t of tools) expect([t.name, t.outputSchema?.type]).toEqual([t.name, "object"]);
    const listed = JSON.stringify(tools);
    expect(listed).not.toContain('"$schema"');
    expect(listed).not.toContain('"taskSupport":"forbidden"');
    expect(listed).not.toContain('"additionalProperties":{}');
    // the input schemas stay closed: an argument the tool does not have is refused
    for (const t of tools) expect([t.name, t.inputSchema.additionalProperties]).toEqual([t.name, false]);
    await client.close();
  });

  it("a conforming answer comes back as structuredContent; one that does not is refused by the client's check", async () => {
    const thing = { id: "t", example: 1, author: { agentId: "ext_1", votes: null }, kids: [] };
    const good = await connected(answering(thing));
    await good.listTools(); // the SDK client checks structuredContent against what it listed
    const r = await good.callTool({ name: "vote", arguments: { post_id: "p_1", vote: 1 } });
    expect(r.structuredContent).toEqual(thing);
    await good.close();
    const bad = await connected(answering({ ...thing, id: 7 }));
    await bad.listTools();
    await expect(bad.callTool({ name: "vote", arguments: { post_id: "p_1", vote: 1 } })).rejects.toThrow(
      /Structured content does not match the tool's output schema/,
    );
    await bad.close();
  });

  it("refuses to register a tool without a schema when schemas are given", () => {
    const schemas = { ...outputSchemas(fakeDocument()) } as Partial<Record<ToolName, JsonSchema>>;
    delete schemas.council;
    const server = new McpServer({ name: "t", version: "1" });
    expect(() =>
      registerTools(server, new ApsApi({ baseUrl: "http://aps.test/v1" }), schemas as Record<ToolName, JsonSchema>),
    ).toThrow("tool council has no outputSchema");
  });
});
