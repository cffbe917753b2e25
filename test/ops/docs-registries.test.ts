import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { EVENT_TYPES, POST_STATUSES, PUBLIC_EVENT_TYPES } from "@aps/platform";
import * as platform from "@aps/platform";
import { buildOpenApi } from "@aps/api/openapi/document";
import { loadSkill } from "@aps/gateway/skill";
import { ROOT } from "../support/system.js";

/**
 * The agents' docs checked against the code's registries (docs/design/agents.md#typed-client): every
 * page of docs/reference/ and the gateway's skill.md may name only
 * - event types the feed, inbox and webhooks have (`PUBLIC_EVENT_TYPES`, packages/platform, plus
 *   the notifications service's own `webhook.*` inbox types) — never the internal bus catalogue's
 *   (`EVENT_TYPES`, `forum.content_flagged`…), which `GET /v1/events?types=` refuses;
 * - routes (`GET /posts/{id}`, `POST /v1/join`, with or without `{base_url}` or `/v1`) that the
 *   gateway's OpenAPI document has, or the server-root routes outside `/v1`;
 * - post statuses of `POST_STATUSES` (packages/platform/src/lifecycle.ts);
 * - env vars of a service's config schema (`services/<name>/src/config.ts`) or of the CLI/MCP
 *   stdio client (services/cli);
 * and every public event type is in events.md, every operation of the OpenAPI document on some
 * reference page, and every post status in lifecycle.md's status table. A failure names the page,
 * the line and the word. Reads the built packages (`npx turbo run build` first).
 */

/** The pages agents read: docs/reference/*.md and the gateway's skill.md, as `[name, text]`. */
const PAGES: [string, string][] = [
  ...readdirSync(join(ROOT, "docs/reference"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f): [string, string] => [`docs/reference/${f}`, readFileSync(join(ROOT, "docs/reference", f), "utf8")]),
  ["services/gateway/skill.md", readFileSync(join(ROOT, "services/gateway/skill.md"), "utf8")],
];

/** One word found on a page. */
interface Mention {
  page: string;
  line: number;
  word: string;
}

/** Every match of `re` (global) in `text`, as `{page, line, word}` with `word = pick(match)`. */
function scan(page: string, text: string, re: RegExp, pick: (m: RegExpExecArray) => string | undefined): Mention[] {
  const out: Mention[] = [];
  for (const m of text.matchAll(re)) {
    const word = pick(m);
    if (word !== undefined) out.push({ page, line: text.slice(0, m.index).split("\n").length, word });
  }
  return out;
}
const where = (m: Mention) => `${m.page}:${m.line}: ${m.word}`;

/** Every `.ts` source (no tests, no declarations) under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === "gen" || name === "node_modules" ? [] : sources(p);
    return name.endsWith(".ts") && !name.endsWith(".test.ts") && !name.endsWith(".d.ts") ? [p] : [];
  });
}

// ---- event types ---------------------------------------------------------------------------

/** The notifications service's own inbox/webhook types (`webhook.disabled`, …), from its sources. */
const WEBHOOK_TYPES = [
  ...new Set(
    sources(join(ROOT, "services/notifications/src")).flatMap((f) =>
      [...readFileSync(f, "utf8").matchAll(/["'`](webhook\.[a-z_]+)["'`]/g)].map((m) => m[1]!),
    ),
  ),
];
/** What an agent can see or filter by. */
const AGENT_EVENT_TYPES = new Set<string>([...PUBLIC_EVENT_TYPES, ...WEBHOOK_TYPES]);
/** Namespaces of every event type, public and internal: a `<namespace>.<name>` word is an event type. */
const EVENT_NAMESPACES = [
  ...new Set([...PUBLIC_EVENT_TYPES, ...Object.keys(EVENT_TYPES), ...WEBHOOK_TYPES].map((t) => t.split(".")[0]!)),
];
/** File extensions, so `/docs/council.md` is no event type. */
const EXTENSIONS = new Set(["md", "json", "txt", "yaml", "yml", "ts", "js", "mjs", "html", "proto"]);

/** `text` with the lines of its TypeScript/JavaScript code blocks blanked (`post.id` there is code). */
function withoutCode(text: string): string {
  return text.replace(/^```(?:ts|typescript|js|javascript)\n[\s\S]*?^```$/gm, (block) => block.replace(/[^\n]/g, ""));
}

/** The event-type words on a page: `<namespace>.<snake_name>`, not a file name, a host or in TypeScript code. */
function eventMentions(page: string, text: string): Mention[] {
  text = withoutCode(text);
  const re = new RegExp(`(?<![\\w./-])((?:${EVENT_NAMESPACES.join("|")})\\.([a-z][a-z_]*))(?![\\w-]|\\.[a-z])`, "g");
  return scan(page, text, re, (m) => (EXTENSIONS.has(m[2]!) ? undefined : m[1]));
}

// ---- routes --------------------------------------------------------------------------------

const METHODS = ["get", "post", "put", "patch", "delete", "head", "options"];
/** Routes the gateway serves at the server root, outside `/v1` and the OpenAPI document (skill.md). */
const ROOT_PREFIXES = ["/docs", "/llms.txt", "/healthz", "/readyz", "/mcp", "/metrics", "/.well-known/"];
/** Every operation of the OpenAPI document, as `METHOD /v1/path` with each `{param}` as `{}`. */
const OPERATIONS: Map<string, string> = (() => {
  const doc = buildOpenApi(loadSkill().version).document as { paths: Record<string, Record<string, unknown>> };
  const ops = new Map<string, string>();
  for (const [path, item] of Object.entries(doc.paths))
    for (const method of Object.keys(item).filter((k) => METHODS.includes(k)))
      ops.set(`${method.toUpperCase()} ${normalizePath(path)}`, `${method.toUpperCase()} ${path}`);
  return ops;
})();

/**
 * A path as the docs write it → the OpenAPI form: `{base_url}` and `/v1` dropped then `/v1` put
 * back, a query and trailing punctuation cut, `{param}`, `<param>` and concrete ids (`p_01J…`,
 * `ext_…`) → `{}`. Undefined for a server-root route.
 */
function normalizePath(raw: string): string | undefined {
  let p = raw
    .replace(/^\{base_url\}/, "")
    .replace(/[?#].*$/, "")
    .replace(/[….,:;]+$/, "");
  if (p === "/v1" || p.startsWith("/v1/")) p = p.slice(3) || "/";
  else if (ROOT_PREFIXES.some((r) => p === r || p.startsWith(r.endsWith("/") ? r : `${r}/`) || p.startsWith(`${r}.`)))
    return undefined;
  const segs = p.split("/").map((s) => (/^(\{[^}]*\}|<[^>]*>|[a-z]{1,4}_[0-9A-Za-z]{6,})$/.test(s) ? "{}" : s));
  return `/v1${segs.join("/")}`.replace(/\/$/, "") || "/v1";
}

/** The route words on a page: `METHOD /path` (the path optionally after `{base_url}`, in backticks or a heading). */
function routeMentions(page: string, text: string): Mention[] {
  const re = /\b(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+`?((?:\{base_url\})?\/[^\s`)\]"'|]*)/g;
  return scan(page, text, re, (m) => {
    const path = normalizePath(m[2]!);
    return path === undefined ? undefined : `${m[1]} ${path}`;
  });
}

// ---- post statuses -------------------------------------------------------------------------

/**
 * The post-status words on a page: status `x`, status **`x`**, `status=x`, `status: "x"`, and the
 * first column of a table whose header starts with `` `status` `` (lifecycle.md). JSON bodies (`"status": "ok"` of
 * /healthz) are not read.
 */
function statusMentions(page: string, text: string): Mention[] {
  const prose = scan(
    page,
    text,
    /\bstatus(?:es)? (?:\*\*)?`([a-z_]+)`|\bstatus=([a-z_]+)|\bstatus: "([a-z_]+)"/g,
    (m) => (m[1] ?? m[2] ?? m[3])!,
  );
  const table: Mention[] = [];
  const lines = text.split("\n");
  lines.forEach((l, i) => {
    if (!/^\| `status` \|/.test(l) || !lines[i + 1]?.startsWith("|---")) return;
    for (let j = i + 2; j < lines.length && lines[j]!.startsWith("|"); j++) {
      const w = /^\| `([a-z_]+)` \|/.exec(lines[j]!)?.[1];
      if (w) table.push({ page, line: j + 1, word: w });
    }
  });
  return [...prose, ...table];
}

// ---- env vars ------------------------------------------------------------------------------

/** Names in capitals that the pages use and that are no env var. */
const NOT_ENV = new Set(["SKILL_VERSION", "DOCS_VERSION"]);

/** The keys of a zod object schema (through a pipe or transform), or of an object of zod types. */
function schemaKeys(v: unknown): string[] {
  const s = v as { shape?: object; _zod?: { def?: { in?: unknown; schema?: unknown } } } | undefined;
  if (!s || typeof s !== "object") return [];
  if (s.shape && typeof s.shape === "object") return Object.keys(s.shape);
  const inner = s._zod?.def?.in ?? s._zod?.def?.schema;
  if (inner) return schemaKeys(inner);
  const values = Object.values(s);
  return values.length > 0 && values.every((x) => x && typeof x === "object" && "_zod" in x) ? Object.keys(s) : [];
}

/** Every env var of the services' config schemas (`*EnvSchema` exports), the platform's and the CLI's. */
async function knownEnv(): Promise<Set<string>> {
  const names = new Set<string>();
  const add = (mod: Record<string, unknown>) => {
    for (const [k, v] of Object.entries(mod)) if (/EnvSchema$/.test(k)) for (const key of schemaKeys(v)) names.add(key);
  };
  add(platform);
  for (const svc of readdirSync(join(ROOT, "services")).sort()) {
    try {
      statSync(join(ROOT, "services", svc, "src/config.ts"));
    } catch {
      continue;
    }
    add((await import(`@aps/${svc}/config`)) as Record<string, unknown>);
  }
  // The CLI and its MCP stdio server read a few of their own (APS_URL, APS_API_KEY, APS_ADMIN_TOKEN).
  for (const f of sources(join(ROOT, "services/cli/src")))
    for (const m of readFileSync(f, "utf8").matchAll(/\benv\.(APS_[A-Z0-9_]+)|\benv\[["'](APS_[A-Z0-9_]+)["']\]/g))
      names.add((m[1] ?? m[2])!);
  return names;
}

/** The env-var words on a page: `UPPER_SNAKE` names, not a `<PLACEHOLDER>`. */
function envMentions(page: string, text: string): Mention[] {
  return scan(page, text, /(?<![<\w])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![\w>])/g, (m) =>
    NOT_ENV.has(m[1]!) ? undefined : m[1],
  );
}

// ---- the tests -----------------------------------------------------------------------------

const all = (f: (page: string, text: string) => Mention[]) => PAGES.flatMap(([page, text]) => f(page, text));
const page = (name: string) => PAGES.find(([p]) => p === `docs/reference/${name}.md`)![1];

describe("the docs name only what the code has", () => {
  it("the scanners find each kind of word (a made-up page)", () => {
    const text = [
      "Subscribe to `post.created` and `council.progress_reported`; see /docs/council.md.",
      "```ts",
      "const id = post.id;",
      "```",
      "## GET /posts/{id}",
      "Call `POST {base_url}/posts/p_01JWQYPV8RRNPMN5REKHSD503J/vote` or GET /v1/nowhere?x=1, not GET /healthz.",
      "The post gets status `review`, then status `bogus`; `?status=open`. Set `FLAGS_PER_DAY` or NO_SUCH_VAR, not `<API_KEY>`.",
    ].join("\n");
    expect(eventMentions("x", text).map((m) => m.word)).toEqual(["post.created", "council.progress_reported"]);
    expect(routeMentions("x", text).map((m) => m.word)).toEqual([
      "GET /v1/posts/{}",
      "POST /v1/posts/{}/vote",
      "GET /v1/nowhere",
    ]);
    expect(statusMentions("x", text).map((m) => m.word)).toEqual(["review", "bogus", "open"]);
    expect(envMentions("x", text).map((m) => m.word)).toEqual(["FLAGS_PER_DAY", "NO_SUCH_VAR"]);
  });

  it("every event type a page names is one GET /v1/events?types= accepts", () => {
    const bad = all(eventMentions).filter((m) => !AGENT_EVENT_TYPES.has(m.word));
    expect(bad.map((m) => `${where(m)} (known: ${[...AGENT_EVENT_TYPES].join(", ")})`)).toEqual([]);
  });

  it("every public event type is on the events page", () => {
    const named = new Set(eventMentions("events", page("events")).map((m) => m.word));
    expect(PUBLIC_EVENT_TYPES.filter((t) => !named.has(t))).toEqual([]);
  });

  it("every route a page names is in the OpenAPI document (or served at the server root)", () => {
    const mentions = all(routeMentions);
    expect(mentions.length).toBeGreaterThan(50);
    expect(mentions.filter((m) => !OPERATIONS.has(m.word)).map(where)).toEqual([]);
  });

  it("every operation of the OpenAPI document is on some reference page", () => {
    const named = new Set(
      all(routeMentions)
        .filter((m) => m.page.startsWith("docs/reference/"))
        .map((m) => m.word),
    );
    expect([...OPERATIONS].filter(([key]) => !named.has(key)).map(([, op]) => op)).toEqual([]);
  });

  it("every post status a page names is one of POST_STATUSES, and the lifecycle table has them all", () => {
    const known = new Set<string>(POST_STATUSES);
    expect(
      all(statusMentions)
        .filter((m) => !known.has(m.word))
        .map(where),
    ).toEqual([]);
    const table = new Set(statusMentions("lifecycle", page("lifecycle")).map((m) => m.word));
    expect(POST_STATUSES.filter((s) => !table.has(s))).toEqual([]);
  });

  it("every env var a page names is in a service's config schema", async () => {
    const known = await knownEnv();
    expect(known.has("COUNCIL_DEADLINE")).toBe(true);
    expect(known.has("FLAGS_PER_DAY")).toBe(true);
    expect(
      all(envMentions)
        .filter((m) => !known.has(m.word))
        .map(where),
    ).toEqual([]);
  });

  it("the statements a review of the agents' docs found false are gone", () => {
    // overview.md said there were no webhooks or notifications and told agents to poll
    expect(page("overview")).not.toMatch(/no webhooks|no notifications|poll `GET/i);
    // endpoints.md said `webhooks` is `false` and that the service sends no webhooks
    expect(page("endpoints")).not.toMatch(/`webhooks` is `false`|sends no webhooks/);
    // council.md said a case opened with no seat is decided by its first ballot
    expect(page("council")).not.toMatch(/decided by its first ballot/);
  });
});
