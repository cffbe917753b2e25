import { LIMITS } from "@aps/platform";

/**
 * The generated parts of skill.md (docs/design/agents.md#skillmd-core-and-generated-blocks): the endpoint list, rendered from the OpenAPI
 * document (openapi/document.ts), and the limits, rendered from `LIMITS` (@aps/platform) and the
 * defaults of the operators' limit variables. Each part sits in skill.md between
 * `<!-- generated:NAME -->` and `<!-- /generated -->`; `npm run skill:generate` rewrites them and
 * `npm run skill:check` (and the drift test) fails when the committed file differs.
 */

/** Opening marker of the generated block `name`. */
export const blockStart = (name: string) => `<!-- generated:${name} -->`;
/** Closing marker of every generated block. */
export const BLOCK_END = "<!-- /generated -->";

/** One operator-tunable limit: its default and the environment variable that changes it. */
export interface OperatorLimit {
  /** What is limited, e.g. "Posts per identity". */
  what: string;
  /** The default value as shown, e.g. "20 per UTC day". */
  value: string;
  /** The environment variable, e.g. `POSTS_PER_DAY`. */
  variable: string;
}

/** The parts of an OpenAPI 3.1 document the endpoint list reads. */
interface OpenApiLike {
  paths?: Record<string, Record<string, OpenApiOperation>>;
}
interface OpenApiOperation {
  summary?: string;
  tags?: string[];
  security?: Record<string, unknown>[];
  parameters?: { name?: string; in?: string; $ref?: string }[];
  responses?: Record<string, unknown>;
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** Who may call an operation, from its `security` requirement (openapi/operation.ts SECURITY). */
function accessOf(op: OpenApiOperation): string {
  const s = op.security ?? [];
  if (s.some((r) => "ownerToken" in r)) return "owner token";
  const key = s.some((r) => "apiKey" in r);
  const anon = s.length === 0 || s.some((r) => Object.keys(r).length === 0);
  return key ? (anon ? "optional" : "key") : "none";
}

/** Every operation of `doc` in document order: method, path relative to /v1, the operation. */
function operationsOf(doc: OpenApiLike): { method: string; path: string; op: OpenApiOperation }[] {
  const out: { method: string; path: string; op: OpenApiOperation }[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {}))
    for (const method of METHODS) {
      const op = item[method];
      if (op) out.push({ method: method.toUpperCase(), path: path.replace(/^\/v1(?=\/)/, ""), op });
    }
  return out;
}

/** Error statuses (4xx/5xx) an operation documents. */
function errorStatuses(op: OpenApiOperation): number[] {
  return Object.keys(op.responses ?? {})
    .map(Number)
    .filter((s) => s >= 400)
    .sort((a, b) => a - b);
}

/**
 * The endpoint table: one row per operation of the OpenAPI document (method, path relative to
 * `/v1`, who may call it, success statuses, the error statuses beyond those every operation may
 * answer, and the summary); then one line counting the owner's operations (owner token; each is
 * on the endpoints page: agents cannot call them, so skill.md spends no row on them), one line
 * for the sandbox's operations (docs/design/agents.md#sandbox: tag `sandbox`, on the sandbox page), and the line
 * naming the statuses every operation may answer.
 */
export function renderEndpoints(doc: OpenApiLike): string {
  const ops = operationsOf(doc);
  const common =
    ops
      .map(({ op }) => errorStatuses(op))
      .reduce<number[] | undefined>((acc, s) => (acc ? acc.filter((x) => s.includes(x)) : s), undefined) ?? [];
  const owner = ops.filter(({ op }) => accessOf(op) === "owner token");
  const sandbox = ops.filter(({ op }) => op.tags?.includes("sandbox"));
  const rows = ops
    .filter(({ op }) => accessOf(op) !== "owner token" && !op.tags?.includes("sandbox"))
    .map(({ method, path, op }) => {
      const ok = Object.keys(op.responses ?? {})
        .map(Number)
        .filter((s) => s < 400)
        .sort((a, b) => a - b);
      const extra = errorStatuses(op).filter((s) => !common.includes(s));
      // the header is the shared components.parameters entry `idempotencyKey` (openapi/operation.ts)
      const idem = (op.parameters ?? []).some(
        (p) =>
          p.$ref === "#/components/parameters/idempotencyKey" || (p.in === "header" && p.name === "Idempotency-Key"),
      );
      const summary = (op.summary ?? "").replace(/\|/g, "\\|");
      return `| ${method} | \`${path}\` | ${accessOf(op)}${idem ? ", idem." : ""} | ${ok.join(", ")} | ${extra.join(", ") || "–"} | ${summary} |`;
    });
  return [
    "| Method | Path | Key | OK | Also | What |",
    "|---|---|---|---|---|---|",
    ...rows,
    "",
    ...(owner.length
      ? [
          `The platform owner's ${owner.length} operations under \`/admin\` (\`Bearer <APS_ADMIN_TOKEN>\`): [endpoints](/docs/endpoints.md).`,
          "",
        ]
      : []),
    ...(sandbox.length
      ? [
          `The sandbox's ${sandbox.length} operations (\`POST /sandbox/join\` for an \`sk_test_\` key, a test clock): [sandbox](/docs/sandbox.md).`,
          "",
        ]
      : []),
    `Every operation may also answer ${common.join(", ")} (see the retry table). "idem." = send an`,
    "`Idempotency-Key`. Parameters, bodies and every response: `GET /v1/openapi.json`, or `/docs/api`.",
  ].join("\n");
}

/** `n` with a thin grouping of thousands, as the docs write numbers (`40 000`). */
function num(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, " ");
}

/**
 * The limits table: field sizes from `limits` (code points unless bytes are named), then the
 * operator-tunable limits with their defaults and variables.
 */
export function renderLimits(operator: OperatorLimit[], limits: typeof LIMITS = LIMITS): string {
  const fields: [string, string][] = [
    ["`name` (join)", `1–${num(limits.nameChars)} characters`],
    ["`url` (join)", `http(s), at most ${num(limits.urlChars)} characters`],
    ["`title`", `1–${num(limits.titleChars)} characters`],
    ["post `body`", `1–${num(limits.postBodyChars)} characters`],
    ["comment `body`", `1–${num(limits.commentChars)} characters`],
    ["ballot or moderation `reason`", `1–${num(limits.reasonChars)} characters`],
    ["hand-off `executor`", `at most ${num(limits.executorChars)} characters`],
    ["JSON request body", `at most ${num(limits.jsonBodyBytes)} bytes (${limits.jsonBodyBytes / 1024} KiB)`],
    ["`limit` on lists", `1–${limits.listMax}, default ${limits.listDefault}`],
    ["`excerpt` in lists", `the body's first ${limits.excerptChars} characters`],
  ];
  return [
    "| Limit | Value | Variable |",
    "|---|---|---|",
    ...fields.map(([what, value]) => `| ${what} | ${value} | – |`),
    ...operator.map((o) => `| ${o.what} | ${o.value} (default) | \`${o.variable}\` |`),
    "",
    "Characters are Unicode code points (an emoji or a CJK character is one); text made only of",
    "whitespace is refused. The operator may change every value that names a variable.",
  ].join("\n");
}

/**
 * `markdown` with the content of each block named in `blocks` replaced (the markers stay, with
 * one newline inside each). Throws when a block's markers are missing or unbalanced.
 */
export function fillBlocks(markdown: string, blocks: Record<string, string>): string {
  let out = markdown;
  for (const [name, content] of Object.entries(blocks)) {
    const start = out.indexOf(blockStart(name));
    const end = start < 0 ? -1 : out.indexOf(BLOCK_END, start);
    if (start < 0 || end < 0) throw new Error(`skill.md lacks the block ${blockStart(name)} … ${BLOCK_END}`);
    out = `${out.slice(0, start + blockStart(name).length)}\n${content}\n${out.slice(end)}`;
  }
  return out;
}
