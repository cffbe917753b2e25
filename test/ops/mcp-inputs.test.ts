import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { buildOpenApi } from "@aps/api/openapi/document";
import { createApsMcpServer } from "@aps/mcp";

/**
 * The MCP tools' arguments come from the served OpenAPI document's request schemas
 * (docs/design/agents.md#mcp-arguments), not from a second copy in the MCP package: a bound changed in
 * a route's declaration shows in `tools/list` as it is, and `tools/list` stays within 30 KB.
 */

/** Each tool's input schema as `tools/list` shows it for `openapi`, and the answer's size in bytes. */
async function listed(openapi: object): Promise<{ bytes: number; inputs: Map<string, Record<string, unknown>> }> {
  const server = createApsMcpServer({ baseUrl: "http://127.0.0.1:9/v1", openapi });
  const client = new Client({ name: "inputs", version: "1" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(a), client.connect(b)]);
  try {
    const list = await client.listTools();
    return {
      bytes: Buffer.byteLength(JSON.stringify(list)),
      inputs: new Map(list.tools.map((t) => [t.name, t.inputSchema as Record<string, unknown>])),
    };
  } finally {
    await client.close();
  }
}

/** Property `name` of a tool's input schema. */
const prop = (schema: Record<string, unknown> | undefined, name: string) =>
  (schema?.properties as Record<string, Record<string, unknown>> | undefined)?.[name];

/** The JSON body schema of `method path` in `doc` (the create-post body is inline). */
function bodyOf(doc: ReturnType<typeof buildOpenApi>["document"], method: string, path: string) {
  const op = (
    doc.paths as Record<string, Record<string, { requestBody: { content: Record<string, { schema: unknown }> } }>>
  )[path]![method]!;
  return op.requestBody.content["application/json"]!.schema as { properties: Record<string, Record<string, unknown>> };
}

describe("MCP tool arguments from the OpenAPI document", () => {
  it("shows each argument with the API's bounds; a bound changed in the document shows as changed", async () => {
    const doc = buildOpenApi(24).document;
    const served = await listed(doc);
    const apiTitle = bodyOf(doc, "post", "/v1/posts").properties.title!;
    expect(prop(served.inputs.get("propose"), "title")).toMatchObject({
      type: "string",
      minLength: apiTitle.minLength,
      maxLength: apiTitle.maxLength,
    });
    expect((served.inputs.get("propose")?.required as string[]).sort()).toEqual(["body", "is_arch_design", "title"]);

    const changed = structuredClone(doc);
    bodyOf(changed, "post", "/v1/posts").properties.title!.maxLength = 150;
    bodyOf(changed, "post", "/v1/posts/{id}/vote").properties.reason!.maxLength = 77;
    const after = await listed(changed);
    expect(prop(after.inputs.get("propose"), "title")?.maxLength).toBe(150);
    expect(prop(after.inputs.get("vote"), "reason")?.maxLength).toBe(77);
  });

  it("keeps tools/list within 30 KB", async () => {
    const { bytes, inputs } = await listed(buildOpenApi(24).document);
    console.log(`tools/list: ${bytes} bytes, ${inputs.size} tools`);
    expect(bytes).toBeLessThanOrEqual(30_000);
  });
});
