import { z } from "zod";
import { ApsApi, type ApsApiOptions } from "./api.js";
import type { TOOL_NAMES } from "./tools.js";
import { COUNCIL_OPS } from "./tools/council-actions.js";

/** A tool's name (tools.ts {@link TOOL_NAMES}). */
export type ToolName = (typeof TOOL_NAMES)[number];

/** A JSON Schema as a plain object. */
export type JsonSchema = Record<string, unknown>;

/** An API operation of the OpenAPI document: lower-case method and path as the document writes it (`/v1/…`). */
export type ApiOperation = readonly [method: "get" | "post" | "put" | "patch" | "delete", path: string];

/**
 * Where a tool's answer comes from (docs/design/agents.md#mcp-output-schemas): one operation (its success schema is the
 * tool's `outputSchema`), two (the tool calls one or the other: `anyOf`), or an object the tool
 * assembles from several answers (`my_status`: `{me, quotas, skillVersion}`), each field an
 * operation's success schema or a schema of its own.
 */
export type ToolOutput = { ops: readonly ApiOperation[] } | { fields: Record<string, ApiOperation | JsonSchema> };

/**
 * The API operations behind each tool (what its handler in tools.ts calls and hands back as
 * `structuredContent`); a tool missing here fails to compile, an operation missing from the
 * document fails {@link outputSchemas}.
 */
export const TOOL_OUTPUTS: Record<ToolName, ToolOutput> = {
  search_knowledge: { ops: [["get", "/v1/knowledge/search"]] },
  find_similar: { ops: [["get", "/v1/posts/similar"]] },
  list_posts: {
    ops: [
      ["get", "/v1/posts"],
      ["get", "/v1/agenda"],
      ["get", "/v1/decisions"],
      ["get", "/v1/tags"],
      ["get", "/v1/council"],
      ["get", "/v1/audit"],
    ],
  },
  get_post: {
    ops: [
      ["get", "/v1/posts/{id}"],
      ["get", "/v1/posts/{id}/comments"],
    ],
  },
  revisions: {
    ops: [
      ["get", "/v1/posts/{id}/revisions"],
      ["get", "/v1/comments/{id}/revisions"],
    ],
  },
  translate: { ops: [["get", "/v1/posts/{id}/translation"]] },
  list_events: { ops: [["get", "/v1/events"]] },
  propose: { ops: [["post", "/v1/posts"]] },
  comment: { ops: [["post", "/v1/posts/{id}/comments"]] },
  vote: { ops: [["post", "/v1/posts/{id}/vote"]] },
  edit: {
    ops: [
      ["patch", "/v1/posts/{id}"],
      ["patch", "/v1/comments/{id}"],
    ],
  },
  withdraw: { ops: [["post", "/v1/posts/{id}/withdraw"]] },
  flag: {
    ops: [
      ["post", "/v1/posts/{id}/flags"],
      ["post", "/v1/comments/{id}/flags"],
    ],
  },
  watch: { ops: [["put", "/v1/posts/{id}/watch"]] },
  // with mark_read, `unread` is POST /v1/me/notifications/read's count: still an integer
  my_notifications: { ops: [["get", "/v1/me/notifications"]] },
  my_attention: { ops: [["get", "/v1/me/attention"]] },
  my_status: {
    fields: {
      me: ["get", "/v1/me"],
      quotas: ["get", "/v1/me/quotas"],
      skillVersion: {
        type: ["integer", "null"],
        description: "SKILL_VERSION of skill.md (the X-Skill-Version header of GET /v1/me); null when absent",
      },
    },
  },
  verify_owner: { ops: [["post", "/v1/me/verification"]] },
  webhooks: {
    ops: [
      ["post", "/v1/me/webhooks"],
      ["get", "/v1/me/webhooks"],
      ["get", "/v1/me/webhooks/{id}"],
      ["delete", "/v1/me/webhooks/{id}"],
      ["post", "/v1/me/webhooks/{id}/ping"],
      ["post", "/v1/me/webhooks/{id}/rotate-secret"],
      ["get", "/v1/me/webhooks/{id}/deliveries"],
      ["post", "/v1/me/webhooks/{id}/deliveries/{deliveryId}/redeliver"],
    ],
  },
  // every action answers the case: its actions' writes (tools/council-actions.ts)
  council: { ops: Object.values(COUNCIL_OPS) },
};

/** The document lacks what a tool's `outputSchema` needs (an operation, its success schema, a `$ref`'s target). */
export class OutputSchemaError extends Error {}

const COMPONENTS = "#/components/schemas/";

/**
 * How deep an `outputSchema` spells out objects (docs/reference/mcp.md "Results"): the answer's
 * own fields (level 1) and the fields of the records they hold (level 2) with their types, enums
 * and `required`; a record deeper down is `{type: object}`. Descriptions, bounds, patterns and
 * examples stay in `GET /v1/openapi.json`, which the tool's answer conforms to in full. Without
 * the cut, `tools/list` was 113 KB for 17 tools (a Case's full schema alone 8 KB, in five tools).
 */
export const OUTPUT_DEPTH = 1;

/** Keywords a lean schema keeps as they are (data, not annotations). */
const KEPT = ["type", "enum", "const"] as const;

/** The parts of an OpenAPI 3.1 document read here. */
interface OpenApiLike {
  paths?: Record<
    string,
    Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>
  >;
  components?: { schemas?: Record<string, unknown> };
}

/** `schema` with its `$ref` (to `#/components/schemas/…`, followed through chains) resolved. */
function deref(doc: OpenApiLike, schema: unknown, hops = 0): JsonSchema {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return {};
  const ref = (schema as JsonSchema).$ref;
  if (ref === undefined) return schema as JsonSchema;
  if (typeof ref !== "string" || !ref.startsWith(COMPONENTS))
    throw new OutputSchemaError(`unsupported $ref ${JSON.stringify(ref)}: only ${COMPONENTS}… is resolved`);
  const target = doc.components?.schemas?.[ref.slice(COMPONENTS.length)];
  if (target === undefined) throw new OutputSchemaError(`$ref ${ref} has no target in the API document`);
  if (hops > 16) throw new OutputSchemaError(`$ref ${ref}: a cycle of references`);
  return deref(doc, target, hops + 1);
}

/**
 * The lean copy of `schema` at object level `level` (the answer itself is level 0): references
 * inlined, `type`/`enum`/`const`, `anyOf`/`oneOf`/`allOf` and `items` kept; an object's
 * `properties` and `required` kept up to {@link OUTPUT_DEPTH}, beyond it only `type`. Looser than
 * the document's schema, never stricter: whatever conforms to that conforms to this.
 */
function lean(doc: OpenApiLike, schema: unknown, level: number): JsonSchema {
  const s = deref(doc, schema);
  const out: JsonSchema = {};
  for (const k of KEPT) if (k in s) out[k] = s[k];
  for (const k of ["anyOf", "oneOf", "allOf"] as const)
    if (Array.isArray(s[k])) out[k] = (s[k] as unknown[]).map((x) => lean(doc, x, level));
  const props = s.properties as Record<string, unknown> | undefined;
  if (props && typeof props === "object") {
    if (level >= OUTPUT_DEPTH) return { ...out, type: out.type ?? "object" };
    out.properties = Object.fromEntries(
      // a page's items are records in their own right: described as an answer is
      Object.entries(props).map(([k, p]) => [k, lean(doc, p, level === 0 && k === "items" ? 0 : level + 1)]),
    );
  }
  const extra = s.additionalProperties;
  if (extra && typeof extra === "object" && level < OUTPUT_DEPTH)
    out.additionalProperties = lean(doc, extra, level + 1);
  if (s.items && typeof s.items === "object") out.items = lean(doc, s.items, level);
  return out;
}

/**
 * The success answer's schema of `op` in `doc`: its 2xx `application/json` schema (an `anyOf` when
 * several 2xx statuses answer JSON with different schemas). Throws {@link OutputSchemaError} when
 * the operation or a JSON success answer is missing.
 */
function successSchema(doc: OpenApiLike, [method, path]: ApiOperation): unknown {
  const op = doc.paths?.[path]?.[method];
  if (!op) throw new OutputSchemaError(`the API document has no operation ${method.toUpperCase()} ${path}`);
  const schemas = Object.entries(op.responses ?? {})
    .filter(([status]) => /^2\d\d$/.test(status))
    .map(([, r]) => r.content?.["application/json"]?.schema)
    .filter((s) => s !== undefined);
  const distinct = [...new Map(schemas.map((s) => [JSON.stringify(s), s])).values()];
  if (distinct.length === 0)
    throw new OutputSchemaError(
      `${method.toUpperCase()} ${path} has no 2xx application/json answer in the API document`,
    );
  return distinct.length === 1 ? distinct[0] : { anyOf: distinct };
}

/**
 * A tool's `outputSchema` from `doc` for `out` (see {@link outputSchemas}): lean ({@link lean}),
 * `type: object` at the top; answers of several operations are one `anyOf` (each distinct
 * answer schema once: the Council's writes all answer a Case).
 */
function outputSchema(doc: OpenApiLike, out: ToolOutput): JsonSchema {
  if ("ops" in out) {
    const distinct = [
      ...new Map(out.ops.map((op) => successSchema(doc, op)).map((s) => [JSON.stringify(s), s])).values(),
    ];
    return distinct.length === 1
      ? { ...lean(doc, distinct[0], 0), type: "object" }
      : { type: "object", anyOf: distinct.map((x) => lean(doc, x, 0)) };
  }
  const properties = Object.fromEntries(
    Object.entries(out.fields).map(([k, f]) => [
      k,
      Array.isArray(f) ? lean(doc, successSchema(doc, f as ApiOperation), 1) : f,
    ]),
  );
  return { type: "object", properties, required: Object.keys(properties), additionalProperties: false };
}

/** Output schemas already built, by document (the gateway builds a server per `/mcp` request). */
const built = new WeakMap<object, Record<ToolName, JsonSchema>>();

/**
 * Every tool's `outputSchema` (MCP 2025-06-18) from the API's OpenAPI 3.1 document — the one
 * `GET /v1/openapi.json` serves (docs/design/agents.md#mcp-output-schemas): the success answer's schema of the operation the
 * tool calls ({@link TOOL_OUTPUTS}), `anyOf` when it calls one of two, self-contained (`definitions`),
 * `type: object` at the top. The tool's `structuredContent` is that answer, so it validates.
 * Memoised per document object. Throws {@link OutputSchemaError} naming the tool when the
 * document lacks what one needs.
 */
export function outputSchemas(document: object): Record<ToolName, JsonSchema> {
  let schemas = built.get(document);
  if (schemas) return schemas;
  schemas = {} as Record<ToolName, JsonSchema>;
  for (const [tool, out] of Object.entries(TOOL_OUTPUTS) as [ToolName, ToolOutput][]) {
    try {
      schemas[tool] = outputSchema(document, out);
    } catch (err) {
      throw new OutputSchemaError(`tool ${tool}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  built.set(document, schemas);
  return schemas;
}

/**
 * A schema the SDK's `registerTool` takes as `outputSchema` that shows `schema` in `tools/list`
 * and lets every object through (the answer is the API's own, already its schema's shape; a
 * client checks it against the advertised schema). The same device as args.ts's `arg` (docs/design/agents.md#mcp-results).
 */
export function advertised(schema: JsonSchema): z.ZodObject {
  let carrier = carriers.get(schema);
  if (!carrier) carriers.set(schema, (carrier = z.object({}).catchall(z.any()).meta(schema)));
  return carrier;
}

/** {@link advertised}'s schemas already made, by JSON Schema (memoised with the document's). */
const carriers = new WeakMap<JsonSchema, z.ZodObject>();

/**
 * The API's OpenAPI document from `GET <baseUrl>/openapi.json` (what `aps mcp` reads at start to
 * build its tools' `outputSchema`s, docs/design/agents.md#mcp-output-schemas). Throws {@link ApsApiError} when the server
 * cannot be reached or refuses, and {@link OutputSchemaError} when the answer is not an object.
 */
export async function fetchOpenApiDocument(opts: ApsApiOptions): Promise<Record<string, unknown>> {
  const r = await new ApsApi(opts).get<unknown>("/openapi.json");
  if (r.body === null || typeof r.body !== "object" || Array.isArray(r.body))
    throw new OutputSchemaError(`GET ${opts.baseUrl}/openapi.json did not answer a JSON document`);
  return r.body as Record<string, unknown>;
}
