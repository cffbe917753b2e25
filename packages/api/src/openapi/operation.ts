import { z } from "zod";
import type { OpenAPIRegistry, RouteConfig } from "@asteasolutions/zod-to-openapi";
import type { ErrorCode } from "@aps/platform";
import { headersOf, problems, type HeaderName } from "./problems.js";

/** Who may call an operation: anyone, anyone with an optional key, a key holder, or the owner. */
export type Access = "none" | "optional" | "key" | "owner";

/**
 * The `If-Match` request header of an edit (docs/reference/editing.md): the revision the edit was
 * made from, as a strong entity tag (`"3"`), as http/if-match.ts reads it.
 */
export const ifMatchHeader = z.object({
  "If-Match": z
    .string()
    .regex(/^(\*|"[1-9][0-9]{0,8}")$/)
    .optional()
    .meta({
      description:
        'the revision you edited, quoted (`"3"`: the `revision` of the post or comment you read); another current revision answers 412 and changes nothing; `*` or none: any revision',
      example: '"3"',
    }),
});

/**
 * The `dryRun` query parameter of every write (docs/design/edge.md#dry-run, http/dry-run.ts), one
 * shared `components.parameters` entry that each write refers to.
 */
const DRY_RUN_PARAMETER = {
  name: "dryRun",
  in: "query",
  required: false,
  description:
    "`true`: run the write whole — validation, limits, authorization — and answer what it would answer (with `Aps-Dry-Run: true`), keeping, publishing and spending nothing",
  schema: { type: "string", enum: ["true", "false"] },
  example: "true",
} as const;

/**
 * The `Idempotency-Key` header of every idempotent operation (docs/design/edge.md#idempotency-key), one shared
 * `components.parameters` entry, as the `idempotencyKeyHeader` guard (shared.ts) checks it (the document stays under its size cap).
 */
const IDEMPOTENCY_KEY_PARAMETER = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "1–255 visible ASCII characters; a retry with the same key, method, path and body gets the first answer again (24 h)",
  schema: { type: "string", pattern: "^[\\x21-\\x7e]{1,255}$" },
  example: "3f1c2b9e-5d4a-4e2b-9c7d-1a2b3c4d5e6f",
} as const;

/** The shared parameters, by component name. */
const SHARED_PARAMETERS = { dryRun: DRY_RUN_PARAMETER, idempotencyKey: IDEMPOTENCY_KEY_PARAMETER } as const;

/** Registries that hold each shared parameter already. */
const registered = new WeakMap<OpenAPIRegistry, Set<string>>();

/** A reference to `registry`'s shared parameter `name`, registered on first use. */
function parameterRef(registry: OpenAPIRegistry, name: keyof typeof SHARED_PARAMETERS): { $ref: string } {
  let names = registered.get(registry);
  if (!names) registered.set(registry, (names = new Set()));
  if (!names.has(name)) {
    names.add(name);
    registry.registerComponent("parameters", name, SHARED_PARAMETERS[name] as never);
  }
  return { $ref: `#/components/parameters/${name}` };
}

/** One `/v1` operation as the document describes it. */
export interface Operation {
  method: RouteConfig["method"];
  /** OpenAPI path relative to /v1, e.g. `/posts/{id}`; "" is `/v1` itself (the index). */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  /**
   * What the operation does, its field rules and notes on its statuses, as Markdown: the OpenAPI
   * operation's `description` and the body of its section in the generated reference page
   * docs/reference/endpoints.md (scripts/endpoints-doc.mjs, docs/design/agents.md#the-endpoints-page). Links
   * are site paths (`/docs/limits.md`, `/docs/endpoints.md#get-me`), so they work in both.
   */
  description?: string;
  /**
   * Example requests and answers (Markdown: fenced blocks, each with its caption), shown only in
   * the generated reference page after the parameter tables: the OpenAPI document does not carry
   * them, so it stays under its size cap (openapi/document-size.test.ts) and its schemas remain the
   * one statement of each shape.
   */
  examples?: string;
  access: Access;
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** JSON request body; `optional` when the route also accepts none. */
  body?: { schema: z.ZodType; optional?: boolean };
  idempotent?: boolean;
  /** Takes `If-Match` with the revision the edit was made from (ifMatchHeader). */
  ifMatch?: boolean;
  /** The success answer. */
  ok: {
    status: number;
    description: string;
    schema: z.ZodType;
    /** Media type of the body (default application/json). */
    mediaType?: string;
    headers?: HeaderName[];
    /** Other media types the same success may be asked for with `Accept` (e.g. `text/markdown`). */
    alternatives?: { mediaType: string; schema: z.ZodType }[];
  };
  /** Answers 304 to a matching If-None-Match (ETag on the 200). */
  conditional?: boolean;
  /** Error codes beyond the ones every operation may answer (problems.ts ALWAYS). */
  codes: ErrorCode[];
}

const SECURITY: Record<Access, RouteConfig["security"]> = {
  none: [],
  optional: [{}, { apiKey: [] }],
  key: [{ apiKey: [] }],
  owner: [{ ownerToken: [] }],
};

/** True when `query` takes a position handed out by the API (`cursor`, or a feed's `after`). */
function hasCursor(query: z.ZodObject): boolean {
  return Object.hasOwn(query.shape, "cursor") || Object.hasOwn(query.shape, "after");
}

/** Registers `op` in `registry` as an OpenAPI operation under `/v1`. */
export function registerOperation(registry: OpenAPIRegistry, op: Operation): void {
  const okHeaders: HeaderName[] = [...(op.ok.headers ?? []), ...(op.conditional ? (["ETag"] as const) : [])];
  if (op.idempotent) okHeaders.push("Idempotent-Replayed");
  const write = op.method !== "get";
  if (write) okHeaders.push("Aps-Dry-Run");

  const responses: RouteConfig["responses"] = {
    [String(op.ok.status)]: {
      description: op.ok.description,
      headers: headersOf(okHeaders),
      content: {
        [op.ok.mediaType ?? "application/json"]: { schema: op.ok.schema },
        ...Object.fromEntries((op.ok.alternatives ?? []).map((a) => [a.mediaType, { schema: a.schema }])),
      },
    },
    ...(op.conditional
      ? { "304": { description: "Not Modified: the If-None-Match tag is current", headers: headersOf(["ETag"]) } }
      : {}),
    // A list with a cursor refuses one it did not issue (http/cursor.ts, docs/reference/errors.md).
    ...problems(registry, op.query && hasCursor(op.query) ? [...op.codes, "invalid_cursor"] : op.codes),
  };
  registry.registerPath({
    method: op.method,
    path: `/v1${op.path}`,
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    security: SECURITY[op.access],
    ...(write || op.idempotent
      ? {
          parameters: [
            ...(write ? [parameterRef(registry, "dryRun")] : []),
            ...(op.idempotent ? [parameterRef(registry, "idempotencyKey")] : []),
          ],
        }
      : {}),
    request: {
      ...(op.params ? { params: op.params } : {}),
      ...(op.query ? { query: op.query } : {}),
      ...(!op.idempotent && op.ifMatch ? { headers: ifMatchHeader } : {}),
      ...(op.body
        ? {
            body: {
              required: !op.body.optional,
              content: { "application/json": { schema: op.body.schema } },
            },
          }
        : {}),
    },
    responses,
  });
}
