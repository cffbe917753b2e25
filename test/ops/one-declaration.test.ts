import { z } from "zod";
import { outputSchemas } from "@aps/mcp";
import { generate } from "@aps/api/openapi/document";
import { OPERATIONS } from "@aps/api";
import { getMyAttention } from "@aps/api/attention/get-my-attention";
import { Attention } from "@aps/api/attention/schemas";
import { defineRoute } from "@aps/api/route";

/**
 * Done means: "a route's schema change reaching all three" — a `/v1` operation is
 * declared once (services/gateway/src/api/, docs/design/edge.md#routes-declared-once), and a change to its response schema
 * reaches the OpenAPI document, `@aps/client`'s generated types and the MCP tool's `outputSchema`
 * with no second edit. Here `GET /me/attention` (the `my_attention` tool) gains a field in its
 * declaration only; each of the three derived artefacts must show it.
 */
describe("one declaration per route reaches the document, the client types and the MCP schema", () => {
  const FIELD = "declaredOnceProbe";
  const changed = defineRoute({
    ...getMyAttention.operation,
    access: "key",
    ok: {
      ...getMyAttention.operation.ok,
      schema: Attention.extend({
        [FIELD]: z.string().meta({ description: "a field added in the declaration only" }),
      }).meta({ id: "Attention" }),
    },
    async handle() {
      return undefined;
    },
  });
  const ops = OPERATIONS.map((op) => (op.operationId === "getMyAttention" ? changed.operation : op));
  const document = generate(1, ops).document as {
    paths: Record<
      string,
      Record<string, { responses: Record<string, { content: Record<string, { schema: object }> }> }>
    >;
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
  };
  const served = generate(1).document as typeof document;

  it("the OpenAPI document describes the new field (and the served one does not)", () => {
    expect(Object.keys(document.components.schemas.Attention?.properties ?? {})).toContain(FIELD);
    expect(Object.keys(served.components.schemas.Attention?.properties ?? {})).not.toContain(FIELD);
    expect(ops.filter((o) => o.operationId === "getMyAttention")).toHaveLength(1);
  });

  it("@aps/client's generated types carry it", async () => {
    const gen = await import("../../packages/client/scripts/generate.mjs");
    const types = await gen.render(document);
    const attention = /Attention: \{[\s\S]*?\n {8}\};/.exec(types)?.[0] ?? "";
    expect(attention).toContain(`${FIELD}: string;`);
    expect(await gen.render(served)).not.toContain(FIELD);
  });

  it("the my_attention tool's outputSchema carries it", () => {
    const schema = JSON.stringify(outputSchemas(document).my_attention);
    expect(schema).toContain(FIELD);
    expect(JSON.stringify(outputSchemas(served).my_attention)).not.toContain(FIELD);
  });

  it("its description reaches the document and the generated endpoints page (docs/design/agents.md#the-endpoints-page)", async () => {
    const PROBE = "A sentence written in the declaration only.";
    const described = ops.map((op) =>
      op.operationId === "getMyAttention" ? { ...op, description: `${op.description ?? ""}\n\n${PROBE}` } : op,
    );
    const doc = generate(1, described).document as { paths: Record<string, Record<string, { description?: string }>> };
    expect(doc.paths["/v1/me/attention"]?.get?.description).toContain(PROBE);
    const page = await import("../../scripts/endpoints-doc.mjs");
    const text = page.render(doc, described);
    const section = text.slice(
      text.indexOf("## GET /me/attention\n"),
      text.indexOf("\n## ", text.indexOf("## GET /me/attention\n")),
    );
    expect(section).toContain(PROBE);
    expect(section).toMatch(/^\*\*Every status\*\*: \*\*200\*\* /m);
    expect(page.render()).not.toContain(PROBE);
  });
});
