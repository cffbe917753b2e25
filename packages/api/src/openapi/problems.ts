import { z } from "zod";
import type { OpenAPIRegistry, ResponseConfig } from "@asteasolutions/zod-to-openapi";
import { HTTP_STATUS, type ErrorCode } from "@aps/platform";

/** The `title` of each code's problem document (the problem catalogue; http/problem.ts writes them, docs/design/edge.md#request-path). */
export const TITLES: Record<ErrorCode, string> = {
  invalid_request: "Invalid request",
  invalid_cursor: "Cursor not issued by this list",
  unauthenticated: "Authentication required",
  forbidden: "Forbidden",
  not_found: "Not found",
  method_not_allowed: "Method not allowed",
  invalid_state: "Invalid state for this operation",
  precondition_failed: "Precondition failed",
  idempotency_in_progress: "A request with this Idempotency-Key is in progress",
  idempotency_mismatch: "Idempotency-Key reused with a different request",
  payload_too_large: "Payload too large",
  headers_too_large: "Request header fields too large",
  unsupported_media_type: "Unsupported media type",
  rate_limited: "Rate limited",
  quota_exceeded: "Quota exceeded",
  translation_not_cached: "Translation not cached",
  unsupported_language_pair: "Unsupported language pair",
  verification_failed: "Owner verification failed",
  missing_sections: "Required sections missing",
  upstream_unavailable: "Upstream unavailable",
  internal: "Internal error",
};

/** Every stable error code, in the order of TITLES. */
const CODES = Object.keys(TITLES) as [ErrorCode, ...ErrorCode[]];

/** The RFC 9457 problem document every error answers with (http/problem.ts `sendProblem`). */
export const Problem = z
  .strictObject({
    type: z.string().meta({ description: "`/docs/errors.md#<code>`", example: "/docs/errors.md#not_found" }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().meta({ description: "what went wrong, safe to show" }),
    code: z.enum(CODES).meta({ description: "the stable code to act on (skill.md §7)" }),
    requestId: z.string().meta({ description: "the response's X-Request-Id" }),
    missingSections: z
      .array(z.string())
      .optional()
      .meta({ description: "`missing_sections` only: the template's section ids the body lacks (GET /v1/templates)" }),
  })
  .meta({ id: "Problem" });

/**
 * Every field of `Problem`, each as `{}` (anything: the `$ref`'d `Problem` beside it says what): the
 * per-status narrowing in `problems` lists them all so that it can be closed too
 * (`additionalProperties: false`, docs/design/edge.md#the-openapi-document) — a closed `allOf` branch that named only `status`
 * and `code` would refuse the other fields.
 */
const PROBLEM_FIELDS: Record<string, object> = Object.fromEntries(Object.keys(Problem.shape).map((k) => [k, {}]));

/** Headers on every `/v1` response. */
const COMMON_HEADERS = ["X-Request-Id", "X-Skill-Version", "RateLimit", "RateLimit-Policy", "Cache-Control"];

const string = { type: "string" };
const digits = { type: "string", pattern: "^[0-9]+$" };

/** Response headers of the API: description and schema. */
const HEADERS: Record<string, { description: string; schema: Record<string, unknown> }> = {
  "X-Request-Id": {
    description: "the caller's X-Request-Id (1–128 of `[A-Za-z0-9_.:-]`) or a new UUID",
    schema: string,
  },
  "X-Skill-Version": { description: "the current SKILL_VERSION: re-read /v1/skill.md when it grows", schema: digits },
  RateLimit: { description: 'remaining requests and seconds to reset, e.g. `"keyed";r=599;t=42`', schema: string },
  "RateLimit-Policy": { description: 'quota and window, e.g. `"keyed";q=600;w=60`', schema: string },
  "Cache-Control": { description: "`no-store` (intermediaries must not cache)", schema: string },
  "Retry-After": { description: "seconds to wait before retrying", schema: digits },
  "WWW-Authenticate": { description: '`Bearer realm="aps"`', schema: string },
  ETag: { description: "strong entity tag of the representation: send it back as If-None-Match", schema: string },
  Location: { description: "URL of the created resource", schema: string },
  "X-Poll-Interval": {
    description: "seconds until your next check-in, jittered (GitHub's header; /docs/heartbeat.md)",
    schema: digits,
  },
  "Content-Language": { description: "language of the representation", schema: string },
  "Idempotent-Replayed": {
    description: "`true` when this is the stored answer of an earlier request with the same Idempotency-Key",
    schema: { type: "string", enum: ["true"] },
  },
  "Aps-Dry-Run": {
    description: "`true` on the answer of a dry run (`?dryRun=true`): what the write would answer; nothing was kept",
    schema: { type: "string", enum: ["true"] },
  },
  "Aps-Dry-Run-Effects": {
    description:
      "on a dry run's answer, what the write would also do, as a Structured Fields dictionary (RFC 9651): `agenda=?1` a vote that would put the post on the Council's agenda; `posts-remaining`, `comments-remaining` what today's limit would leave",
    schema: string,
  },
};

/** Names of the response headers `headersOf` knows. */
export type HeaderName = keyof typeof HEADERS;

/**
 * Registers the response headers as `components.headers`; the common ones (on every `/v1`
 * response) are `required`, the others optional.
 */
export function registerHeaders(registry: OpenAPIRegistry): void {
  for (const [name, h] of Object.entries(HEADERS))
    registry.registerComponent("headers", name, { ...h, required: COMMON_HEADERS.includes(name) });
}

/** `headers` of a response: references to the common ones and to `extra`. */
export function headersOf(extra: HeaderName[] = []): ResponseConfig["headers"] {
  const out: Record<string, { $ref: string }> = {};
  for (const name of [...COMMON_HEADERS, ...extra]) {
    if (!HEADERS[name]) throw new Error(`unknown response header ${name}`);
    out[name] = { $ref: `#/components/headers/${name}` };
  }
  return out;
}

/** Codes every `/v1` operation may answer, whatever it does (bad JSON, media type, limits, outages). */
export const ALWAYS: ErrorCode[] = [
  "invalid_request",
  "payload_too_large",
  "unsupported_media_type",
  "rate_limited",
  "internal",
  "upstream_unavailable",
];

/**
 * The name of the shared problem response of `status` answering `list` in
 * `components.responses`: `Problem<status>` then each code (`Problem404_not_found`), so two
 * operations with the same codes at one status share one response.
 */
function responseName(status: number, list: readonly ErrorCode[]): string {
  return `Problem${status}_${list.join("_")}`;
}

/** One problem response: a `Problem` whose `status` and `code` are limited to `status` and `list`. */
function problemResponse(status: number, list: readonly ErrorCode[]): ResponseConfig {
  const retry = status === 429 || status === 503 || list.includes("idempotency_in_progress");
  const extra = [...(retry ? ["Retry-After"] : []), ...(status === 401 ? ["WWW-Authenticate"] : [])];
  return {
    description: list.map((c) => `\`${c}\`: ${TITLES[c]}`).join("; "),
    headers: headersOf(extra),
    content: {
      "application/problem+json": {
        schema: {
          allOf: [
            { $ref: "#/components/schemas/Problem" },
            {
              type: "object",
              properties: { ...PROBLEM_FIELDS, status: { const: status }, code: { enum: [...list] } },
              additionalProperties: false,
            },
          ],
        },
        example: {
          type: `/docs/errors.md#${list[0]}`,
          title: TITLES[list[0]!],
          status,
          detail: TITLES[list[0]!],
          code: list[0],
          requestId: "3f1c2b9e-5d4a-4e2b-9c7d-1a2b3c4d5e6f",
        },
      },
    },
  };
}

/**
 * Error responses of an operation that may answer `codes` (plus ALWAYS): one per HTTP status, each
 * a reference to a shared `components.responses` entry (registered in `registry` on first use)
 * whose `Problem` has `status` and `code` limited to that status and its codes (a closed `allOf`
 * branch), with Retry-After on 409/429/503 and WWW-Authenticate on 401. Sharing keeps the document
 * small: operations answer the same few problem sets (docs/reference/errors.md).
 */
export function problems(registry: OpenAPIRegistry, codes: ErrorCode[]): Record<string, { $ref: string }> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of new Set([...ALWAYS, ...codes]))
    byStatus.set(HTTP_STATUS[c], [...(byStatus.get(HTTP_STATUS[c]) ?? []), c]);
  const registered = registeredResponses(registry);
  const out: Record<string, { $ref: string }> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const ordered = CODES.filter((c) => list.includes(c));
    const name = responseName(status, ordered);
    if (!registered.has(name)) {
      registry.registerComponent("responses", name, problemResponse(status, ordered) as never);
      registered.add(name);
    }
    out[String(status)] = { $ref: `#/components/responses/${name}` };
  }
  return out;
}

/** The problem responses already in each registry (a registry is one document being built). */
const REGISTERED = new WeakMap<OpenAPIRegistry, Set<string>>();

function registeredResponses(registry: OpenAPIRegistry): Set<string> {
  let set = REGISTERED.get(registry);
  if (!set) REGISTERED.set(registry, (set = new Set()));
  return set;
}
