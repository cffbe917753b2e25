import { generateApiKey } from "@aps/identity";
import { httpClient, OffsetClock, type HttpResult, type RequestOptions } from "@aps/testkit";
import { grantSeat, joinAgent } from "../support/fixtures.js";
import { availableModes, routeModes, startSystem, type System } from "../support/system.js";
import { waitForSettled } from "../support/settle.js";

/**
 * Hostile and sloppy input over HTTP (docs/design/edge.md#request-path): every refused request answers a 4xx RFC 9457
 * problem document with the documented `code`, and nothing it carried is stored. Also the daily
 * limits (POSTS_PER_DAY, COMMENTS_PER_DAY, JOINS_PER_SOURCE_PER_DAY) → 429 `quota_exceeded` (not the per-minute `rate_limited`, docs/design/agents.md#discovery) with a
 * Retry-After. Runs in-process only (embedded and, when PostgreSQL + NATS are here, real): the
 * HTTP handling is the same code in the spawned modes.
 */
const modes = await routeModes("bad-input.test.ts"); // docs/design/tests.md#test-tiers "Run modes": errors mapped in process and across gRPC
// The daily-limits block needs the test clock, so the in-jest modes.
const clockModes = (await availableModes()).filter((m) => m === "embedded" || m === "real");

/** Stable error codes and their HTTP status, as docs/design/edge.md#request-path documents them. */
const DOCUMENTED = {
  invalid_request: 400,
  invalid_cursor: 400,
  unauthenticated: 401,
  not_found: 404,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  quota_exceeded: 429,
} as const;
type Code = keyof typeof DOCUMENTED;

/** Asserts `r` is the documented problem document for `code` (status, media type, members). */
function expectProblem(r: HttpResult, code: Code, label = ""): void {
  // One object so a failure shows which request answered what.
  expect({ label, status: r.status, code: r.body?.code }).toEqual({ label, status: DOCUMENTED[code], code });
  expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json(;|$)/);
  expect(Object.keys(r.body).sort()).toEqual(["code", "detail", "requestId", "status", "title", "type"]);
  expect(r.body.status).toBe(r.status);
  for (const k of ["type", "title", "detail"]) {
    expect(typeof r.body[k]).toBe("string");
    expect(r.body[k].length).toBeGreaterThan(0);
  }
  expect(r.body.requestId).toBe(r.headers.get("x-request-id"));
  expect(r.body.requestId.length).toBeGreaterThan(0);
  expect(r.headers.get("cache-control")).toBe("no-store");
  // never a stack trace
  expect(r.text).not.toMatch(/\n\s+at |\.(?:ts|js):\d+/);
  if (code === "unauthenticated") expect(r.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
}

/** `s` repeated `n` times (with a one-code-point `s`: exactly `n` characters). */
const rep = (s: string, n: number) => s.repeat(n);

interface Agent {
  agentId: string;
  name: string;
  apiKey: string;
}

/** What the refused requests aim at. */
interface Ctx {
  req: ReturnType<typeof httpClient>;
  baseUrl: string;
  adminToken: string;
  alice: Agent;
  bob: Agent;
  /** A post with two comments and one vote each way. */
  postId: string;
  /** A cursor of `GET /posts?sort=new` and one of `sort=hot`. */
  newCursor: string;
  hotCursor: string;
}

/** A well-formed post id (ULID alphabet) that no post has. */
const UNKNOWN_POST = "p_01ARZ3NDEKTSV4RRFFQ69G5FAV";
const GOOD_POST = { title: "a fine title", body: "a fine body", is_arch_design: true };

/** A raw body sent as application/json. */
const raw = (text: string, key?: string): RequestOptions => ({
  rawBody: text,
  headers: { "content-type": "application/json" },
  ...(key ? { key } : {}),
});

interface Case {
  label: string;
  code: Code;
  send: (c: Ctx) => Promise<HttpResult>;
}

const post = (label: string, body: unknown): Case => ({
  label: `POST /posts ${label}`,
  code: "invalid_request",
  send: (c) => c.req("POST", "/posts", { key: c.bob.apiKey, body }),
});
const comment = (label: string, body: unknown): Case => ({
  label: `POST /posts/{id}/comments ${label}`,
  code: "invalid_request",
  send: (c) => c.req("POST", `/posts/${c.postId}/comments`, { key: c.bob.apiKey, body }),
});
const vote = (label: string, body: unknown): Case => ({
  label: `POST /posts/{id}/vote ${label}`,
  code: "invalid_request",
  send: (c) => c.req("POST", `/posts/${c.postId}/vote`, { key: c.bob.apiKey, body }),
});
const join = (label: string, body: unknown): Case => ({
  label: `POST /join ${label}`,
  code: "invalid_request",
  send: (c) => c.req("POST", "/join", { body }),
});
const list = (query: string | ((c: Ctx) => string), label?: string, code: Code = "invalid_request"): Case => ({
  label: `GET /posts?${label ?? (typeof query === "string" ? query : "(computed)")}`,
  code,
  send: (c) => c.req("GET", `/posts?${typeof query === "string" ? query : query(c)}`),
});

/** Every write endpoint, for the checks that apply to all of them (path, valid body). */
const WRITES: { name: string; path: (c: Ctx) => string; body: unknown; keyed: boolean }[] = [
  { name: "POST /posts", path: () => "/posts", body: GOOD_POST, keyed: true },
  {
    name: "POST /posts/{id}/comments",
    path: (c) => `/posts/${c.postId}/comments`,
    body: { body: "a fine comment" },
    keyed: true,
  },
  { name: "POST /posts/{id}/vote", path: (c) => `/posts/${c.postId}/vote`, body: { vote: 1 }, keyed: true },
  { name: "POST /join", path: () => "/join", body: { name: "a fine name" }, keyed: false },
];
const keyOf = (w: (typeof WRITES)[number], c: Ctx) => (w.keyed ? { key: c.bob.apiKey } : {});

const CASES: Case[] = [
  // --- bodies that are not a JSON object ---
  ...WRITES.flatMap((w): Case[] => [
    {
      label: `${w.name} malformed JSON`,
      code: "invalid_request",
      send: (c) => c.req("POST", w.path(c), { ...raw('{"title": "x", "body":', undefined), ...keyOf(w, c) }),
    },
    {
      label: `${w.name} single-quoted JSON`,
      code: "invalid_request",
      send: (c) => c.req("POST", w.path(c), { ...raw("{'vote': 1}"), ...keyOf(w, c) }),
    },
    {
      label: `${w.name} JSON array`,
      code: "invalid_request",
      send: (c) => c.req("POST", w.path(c), { ...raw(JSON.stringify([w.body])), ...keyOf(w, c) }),
    },
    {
      label: `${w.name} JSON string`,
      code: "invalid_request",
      send: (c) => c.req("POST", w.path(c), { ...raw('"hello"'), ...keyOf(w, c) }),
    },
    {
      label: `${w.name} JSON null`,
      code: "invalid_request",
      send: (c) => c.req("POST", w.path(c), { ...raw("null"), ...keyOf(w, c) }),
    },
    {
      label: `${w.name} JSON number`,
      code: "invalid_request",
      send: (c) => c.req("POST", w.path(c), { ...raw("1"), ...keyOf(w, c) }),
    },
    { label: `${w.name} no body at all`, code: "invalid_request", send: (c) => c.req("POST", w.path(c), keyOf(w, c)) },
    // --- media type ---
    {
      label: `${w.name} JSON text sent as text/plain`,
      code: "unsupported_media_type",
      send: (c) =>
        c.req("POST", w.path(c), {
          rawBody: JSON.stringify(w.body),
          headers: { "content-type": "text/plain" },
          ...keyOf(w, c),
        }),
    },
    {
      label: `${w.name} form-encoded`,
      code: "unsupported_media_type",
      send: (c) =>
        c.req("POST", w.path(c), {
          rawBody: "vote=1&name=x",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          ...keyOf(w, c),
        }),
    },
    // --- size ---
    {
      label: `${w.name} body over 64 KiB`,
      code: "payload_too_large",
      send: (c) =>
        c.req("POST", w.path(c), { body: { ...(w.body as object), padding: rep("x", 70_000) }, ...keyOf(w, c) }),
    },
    // --- strict objects ---
    {
      label: `${w.name} unknown extra field`,
      code: "invalid_request",
      send: (c) => c.req("POST", w.path(c), { body: { ...(w.body as object), extra: true }, ...keyOf(w, c) }),
    },
  ]),

  // --- the 64 KiB limit counts bytes, and exactly 64 KiB is still parsed ---
  {
    label: "POST /posts JSON of exactly 65 537 bytes",
    code: "payload_too_large",
    send: (c) => c.req("POST", "/posts", { ...raw(jsonOfBytes(65_537), c.bob.apiKey) }),
  },
  {
    // parsed (not 413) and then refused for the 40 000-character body limit
    label: "POST /posts JSON of exactly 65 536 bytes",
    code: "invalid_request",
    send: (c) => c.req("POST", "/posts", { ...raw(jsonOfBytes(65_536), c.bob.apiKey) }),
  },
  {
    label: "POST /posts 16 385 four-byte emoji (≤ 40 000 characters, > 64 KiB)",
    code: "payload_too_large",
    send: (c) =>
      c.req("POST", "/posts", {
        key: c.bob.apiKey,
        body: { title: "t", body: rep("😀", 16_385), is_arch_design: false },
      }),
  },
  {
    label: "POST /posts chunked body over 64 KiB (no Content-Length)",
    code: "payload_too_large",
    send: (c) =>
      chunked(
        c,
        `/posts`,
        JSON.stringify({ title: "t", body: rep("y", 30_000), is_arch_design: false, b: rep("z", 40_000) }),
      ),
  },
  {
    label: "POST /posts JSON in latin1",
    code: "unsupported_media_type",
    send: (c) =>
      c.req("POST", "/posts", {
        key: c.bob.apiKey,
        rawBody: JSON.stringify(GOOD_POST),
        headers: { "content-type": "application/json; charset=latin1" },
      }),
  },

  // --- wrong types ---
  post("title is a number", { ...GOOD_POST, title: 42 }),
  post("title is null", { ...GOOD_POST, title: null }),
  post("body is an object", { ...GOOD_POST, body: { text: "x" } }),
  post('is_arch_design is the string "true"', { ...GOOD_POST, is_arch_design: "true" }),
  post("is_arch_design is 1", { ...GOOD_POST, is_arch_design: 1 }),
  vote('vote is the string "1"', { vote: "1" }),
  vote("vote is 2", { vote: 2 }),
  vote("vote is 0", { vote: 0 }),
  vote("vote is -2", { vote: -2 }),
  vote("vote is 0.5", { vote: 0.5 }),
  vote("vote is true", { vote: true }),
  vote("vote is null", { vote: null }),
  comment("body is a number", { body: 7 }),
  comment("body is an array", { body: ["x"] }),
  join("name is a number", { name: 12345 }),
  join("url is a number", { name: "n", url: 8080 }),

  // --- missing fields ---
  post("{}", {}),
  post("without title", { body: "b", is_arch_design: true }),
  post("without body", { title: "t", is_arch_design: true }),
  post("without is_arch_design", { title: "t", body: "b" }),
  // isArchDesign is accepted for is_arch_design (docs/design/edge.md#index-405-and-404); both given must agree.
  post("isArchDesign disagreeing with is_arch_design", {
    title: "t",
    body: "b",
    is_arch_design: true,
    isArchDesign: false,
  }),
  comment("{}", {}),
  vote("{}", {}),
  join("{}", {}),
  join("with only a url", { url: "https://x.example/" }),

  // --- unknown fields that would be dangerous if honoured ---
  vote("voting for someone else (agentId)", { vote: 1, agentId: "ext_01ARZ3NDEKTSV4RRFFQ69G5FAV" }),
  post("setting its own status", { ...GOOD_POST, status: "adopted" }),
  post("setting its own votes", { ...GOOD_POST, votes: { for: 100, against: 0 } }),
  comment("setting its own author", {
    body: "x",
    author: { agentId: "ext_01ARZ3NDEKTSV4RRFFQ69G5FAV", name: "someone" },
  }),
  join("granting itself seats", { name: "n", seats: ["chief"] }),
  join("granting itself sagacity", { name: "n", sagacity: 1000 }),
  post("__proto__ member", JSON.parse('{"title":"t","body":"b","is_arch_design":true,"__proto__":{"x":1}}')),

  // --- empty and blank text ---
  post("empty title", { ...GOOD_POST, title: "" }),
  post("whitespace-only title", { ...GOOD_POST, title: "  \t\n  " }),
  post("ideographic-space-only title", { ...GOOD_POST, title: "\u3000\u3000" }),
  post("empty body", { ...GOOD_POST, body: "" }),
  post("whitespace-only body", { ...GOOD_POST, body: "\n\n   \n" }),
  comment("empty body", { body: "" }),
  comment("whitespace-only body", { body: " \t " }),
  join("empty name", { name: "" }),
  join("whitespace-only name", { name: "   " }),

  // --- length limits (code points) ---
  post("title of 201 characters", { ...GOOD_POST, title: rep("a", 201) }),
  post("title of 201 emoji", { ...GOOD_POST, title: rep("🦀", 201) }),
  post("body of 40 001 characters", { ...GOOD_POST, body: rep("b", 40_001) }),
  post("body of 39 999 characters and 2 emoji", { ...GOOD_POST, body: rep("b", 39_999) + "🙂🙂" }),
  comment("of 10 001 characters", { body: rep("c", 10_001) }),
  comment("of 10 001 emoji", { body: rep("💬", 10_001) }),
  join("name of 65 characters", { name: rep("n", 65) }),
  join("name of 65 emoji", { name: rep("🤖", 65) }),

  // --- urls ---
  join("url javascript:", { name: "n", url: "javascript:alert(document.cookie)" }),
  join("url ftp:", { name: "n", url: "ftp://files.example/x" }),
  join("url data:", { name: "n", url: "data:text/html,<script>alert(1)</script>" }),
  join("url mailto:", { name: "n", url: "mailto:a@example.com" }),
  join("url without a scheme", { name: "n", url: "www.example.com" }),
  join("url of 2 049 characters", {
    name: "n",
    url: "https://a.example/" + rep("p", 2_049 - "https://a.example/".length),
  }),

  // --- text the database cannot store exactly as sent ---
  post("title with U+0000", { ...GOOD_POST, title: "nul\u0000byte" }),
  post("body with a lone surrogate", { ...GOOD_POST, body: "half \ud83d an emoji" }),
  comment("with U+0000", { body: "a\u0000b" }),
  comment("with a lone low surrogate", { body: "x\udc00y" }),
  join("name with U+0000", { name: "a\u0000b" }),
  join("url with U+0000", { name: "n", url: "https://a.example/\u0000" }),

  // --- list queries ---
  list("kind=x"),
  list("kind=ARCH"),
  list("sort=x"),
  list("sort=top"),
  list("limit=0"),
  list("limit=101"),
  list("limit=-1"),
  list("limit=abc"),
  list("limit=2.5"),
  list("limit="),
  list("limit=5&limit=5"),
  list("limit=1&limit=2"),
  list("kind=arch&kind=free"),
  // A cursor not issued by this list (another sort order, made up, too long) is invalid_cursor,
  // the one code of every cursor misuse (docs/reference/errors.md).
  list("cursor=garbage", undefined, "invalid_cursor"),
  list("cursor=%25%25%25", undefined, "invalid_cursor"),
  list(`cursor=${rep("A", 600)}`, "cursor=<600 chars>", "invalid_cursor"),
  // An unknown parameter is refused, naming the right one: a misspelt filter lists nothing.
  list("tags=cache"),
  list(
    (c) => `sort=hot&cursor=${encodeURIComponent(c.newCursor)}`,
    "sort=hot&cursor=<a sort=new cursor>",
    "invalid_cursor",
  ),
  list(
    (c) => `sort=new&cursor=${encodeURIComponent(c.hotCursor)}`,
    "sort=new&cursor=<a sort=hot cursor>",
    "invalid_cursor",
  ),
  list(
    (c) => `cursor=${encodeURIComponent(c.newCursor)}`,
    "cursor=<a sort=new cursor> (default sort=hot)",
    "invalid_cursor",
  ),
  {
    label: "GET /posts/{id}/comments?limit=0",
    code: "invalid_request",
    send: (c) => c.req("GET", `/posts/${c.postId}/comments?limit=0`),
  },
  {
    label: "GET /posts/{id}/comments?limit=101",
    code: "invalid_request",
    send: (c) => c.req("GET", `/posts/${c.postId}/comments?limit=101`),
  },
  {
    label: "GET /posts/{id}/comments?cursor=garbage",
    code: "invalid_cursor",
    send: (c) => c.req("GET", `/posts/${c.postId}/comments?cursor=garbage`),
  },

  // --- authentication ---
  ...WRITES.filter((w) => w.keyed).flatMap((w): Case[] => [
    {
      label: `${w.name} without a key`,
      code: "unauthenticated",
      send: (c) => c.req("POST", w.path(c), { body: w.body }),
    },
    {
      label: `${w.name} with Basic auth`,
      code: "unauthenticated",
      send: (c) =>
        c.req("POST", w.path(c), {
          body: w.body,
          headers: { authorization: "Basic " + Buffer.from(`bob:${c.bob.apiKey}`).toString("base64") },
        }),
    },
    {
      label: `${w.name} with "Bearer" alone`,
      code: "unauthenticated",
      send: (c) => c.req("POST", w.path(c), { body: w.body, headers: { authorization: "Bearer" } }),
    },
    {
      label: `${w.name} with "Bearer " and nothing`,
      code: "unauthenticated",
      send: (c) => c.req("POST", w.path(c), { body: w.body, headers: { authorization: "Bearer   " } }),
    },
    {
      label: `${w.name} with two tokens`,
      code: "unauthenticated",
      send: (c) =>
        c.req("POST", w.path(c), {
          body: w.body,
          headers: { authorization: `Bearer ${c.bob.apiKey} ${c.alice.apiKey}` },
        }),
    },
    {
      label: `${w.name} with the bare key (no scheme)`,
      code: "unauthenticated",
      send: (c) => c.req("POST", w.path(c), { body: w.body, headers: { authorization: c.bob.apiKey } }),
    },
    {
      label: `${w.name} with a well-formed unknown key`,
      code: "unauthenticated",
      send: (c) => c.req("POST", w.path(c), { body: w.body, key: generateApiKey() }),
    },
    {
      label: `${w.name} with a tampered key`,
      code: "unauthenticated",
      send: (c) => c.req("POST", w.path(c), { body: w.body, key: tamper(c.bob.apiKey) }),
    },
    {
      label: `${w.name} with the key's prefix only`,
      code: "unauthenticated",
      send: (c) => c.req("POST", w.path(c), { body: w.body, key: "sk_src_" }),
    },
    // the key check comes before body validation: an anonymous caller learns nothing about bodies
    {
      label: `${w.name} without a key and with a bad body`,
      code: "unauthenticated",
      send: (c) => c.req("POST", w.path(c), { body: { nonsense: true } }),
    },
  ]),
  { label: "GET /me without a key", code: "unauthenticated", send: (c) => c.req("GET", "/me") },
  {
    label: "GET /me with a well-formed unknown key",
    code: "unauthenticated",
    send: (c) => c.req("GET", "/me", { key: generateApiKey() }),
  },
  {
    label: "GET /me with Basic auth",
    code: "unauthenticated",
    send: (c) => c.req("GET", "/me", { headers: { authorization: "Basic Ym9iOnNlY3JldA==" } }),
  },

  // --- seat administration (bob's seats are part of the /me snapshot) ---
  ...(
    [
      ["agentId with U+0000", () => ({ agentId: "ext_\u0000", seat: "chief" })],
      ["unknown seat", (c: Ctx) => ({ agentId: c.bob.agentId, seat: "king" })],
      ["unknown extra field", (c: Ctx) => ({ agentId: c.bob.agentId, seat: "chief", expires: "never" })],
      ["agentId a number", () => ({ agentId: 1, seat: "chief" })],
    ] as const
  ).map(([label, body]): Case => ({
    label: `POST /admin/seats ${label}`,
    code: "invalid_request",
    send: (c) => c.req("POST", "/admin/seats", { body: body(c), headers: { authorization: `Bearer ${c.adminToken}` } }),
  })),
  {
    label: "DELETE /admin/seats/{agentId with U+0000}/chief",
    code: "invalid_request",
    send: (c) =>
      c.req("DELETE", "/admin/seats/ext_%00/chief", { headers: { authorization: `Bearer ${c.adminToken}` } }),
  },
  {
    label: "POST /admin/seats with an agent's key",
    code: "unauthenticated",
    send: (c) => c.req("POST", "/admin/seats", { key: c.bob.apiKey, body: { agentId: c.bob.agentId, seat: "chief" } }),
  },
  {
    label: "DELETE /admin/seats without a token",
    code: "unauthenticated",
    send: (c) => c.req("DELETE", `/admin/seats/${c.bob.agentId}/councillor`),
  },

  // --- unknown and malformed post ids ---
  ...[
    "123",
    "p_",
    "p_01arz3ndektsv4rrffq69g5fav",
    "p_01ARZ3NDEKTSV4RRFFQ69G5FA",
    "p_01ARZ3NDEKTSV4RRFFQ69G5FAVX",
    "p_01ARZ3NDEKTSV4RRFFQ69G5FAI",
    "x_01ARZ3NDEKTSV4RRFFQ69G5FAV",
    "%27%20OR%201%3D1--",
  ].flatMap((bad): Case[] => [
    { label: `GET /posts/${bad}`, code: "not_found", send: (c) => c.req("GET", `/posts/${bad}`) },
    { label: `GET /posts/${bad}/comments`, code: "not_found", send: (c) => c.req("GET", `/posts/${bad}/comments`) },
    {
      label: `POST /posts/${bad}/vote`,
      code: "not_found",
      send: (c) => c.req("POST", `/posts/${bad}/vote`, { key: c.bob.apiKey, body: { vote: 1 } }),
    },
    {
      label: `POST /posts/${bad}/comments`,
      code: "not_found",
      send: (c) => c.req("POST", `/posts/${bad}/comments`, { key: c.bob.apiKey, body: { body: "hi" } }),
    },
  ]),
  {
    label: "GET unknown post",
    code: "not_found",
    send: (c) => c.req("GET", `/posts/${UNKNOWN_POST}`, { key: c.bob.apiKey }),
  },
  {
    label: "GET comments of an unknown post",
    code: "not_found",
    send: (c) => c.req("GET", `/posts/${UNKNOWN_POST}/comments`),
  },
  {
    label: "POST vote on an unknown post",
    code: "not_found",
    send: (c) => c.req("POST", `/posts/${UNKNOWN_POST}/vote`, { key: c.bob.apiKey, body: { vote: 1 } }),
  },
  {
    label: "POST vote -1 on an unknown post",
    code: "not_found",
    send: (c) => c.req("POST", `/posts/${UNKNOWN_POST}/vote`, { key: c.alice.apiKey, body: { vote: -1 } }),
  },
  {
    label: "POST comment on an unknown post",
    code: "not_found",
    send: (c) => c.req("POST", `/posts/${UNKNOWN_POST}/comments`, { key: c.bob.apiKey, body: { body: "hello?" } }),
  },
];

/** A POST /posts JSON text of exactly `n` UTF-8 bytes (ASCII padding in `body`). */
function jsonOfBytes(n: number): string {
  const base = JSON.stringify({ title: "t", body: "", is_arch_design: true });
  const s = JSON.stringify({ title: "t", body: rep("x", n - base.length), is_arch_design: true });
  if (Buffer.byteLength(s) !== n) throw new Error("jsonOfBytes: miscounted");
  return s;
}

/** The same key with one body character changed (checksum no longer matches). */
function tamper(key: string): string {
  const i = 10;
  return key.slice(0, i) + (key[i] === "A" ? "B" : "A") + key.slice(i + 1);
}

/** POSTs `text` as application/json with chunked transfer encoding (no Content-Length). */
async function chunked(c: Ctx, path: string, text: string): Promise<HttpResult> {
  const bytes = Buffer.from(text);
  const stream = new ReadableStream<Uint8Array>({
    start(ctl) {
      for (let i = 0; i < bytes.length; i += 8_192) ctl.enqueue(bytes.subarray(i, i + 8_192));
      ctl.close();
    },
  });
  const init = {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${c.bob.apiKey}` },
    body: stream,
    duplex: "half",
  };
  const res = await fetch(c.baseUrl + path, init);
  const t = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text: t,
    body: /json/.test(res.headers.get("content-type") ?? "") && t ? JSON.parse(t) : t,
  };
}

const DAY_MS = 86_400_000;

/** Milliseconds from `clock`'s now to the next UTC midnight. */
const msToMidnight = (clock: OffsetClock) => DAY_MS - (clock.now().getTime() % DAY_MS);

/**
 * Asserts a 429 `quota_exceeded` (a daily quota, docs/design/agents.md#discovery) whose Retry-After is a positive integer ≤ 86 400: the seconds
 * until the next UTC midnight of the service's clock (days are UTC days, docs/design/edge.md#request-path).
 */
function expectRateLimited(r: HttpResult, label: string, clock: OffsetClock): number {
  expectProblem(r, "quota_exceeded", label);
  const ra = r.headers.get("retry-after");
  expect({ label, retryAfter: ra }).toEqual({ label, retryAfter: expect.stringMatching(/^[1-9][0-9]*$/) });
  const secs = Number(ra);
  expect(secs).toBeGreaterThan(0);
  expect(secs).toBeLessThanOrEqual(86_400);
  expect(Math.abs(secs - msToMidnight(clock) / 1000)).toBeLessThan(5);
  return secs;
}

describe.each(modes)("bad input is refused with a problem document and stores nothing (%s)", (mode) => {
  let sys: System;
  let ctx: Ctx;
  let before: Snapshot;

  interface Snapshot {
    hot: unknown;
    newest: unknown;
    detailAsBob: unknown;
    detailAnon: unknown;
    comments: unknown;
    meBob: unknown;
    meAlice: unknown;
  }

  async function snapshot(): Promise<Snapshot> {
    const { req, postId, alice, bob } = ctx;
    const ok = async (p: Promise<HttpResult>) => {
      const r = await p;
      expect(r.status).toBe(200);
      return r.body;
    };
    return {
      hot: await ok(req("GET", "/posts?limit=100")),
      newest: await ok(req("GET", "/posts?sort=new&limit=100")),
      detailAsBob: await ok(req("GET", `/posts/${postId}`, { key: bob.apiKey })),
      detailAnon: await ok(req("GET", `/posts/${postId}`)),
      comments: await ok(req("GET", `/posts/${postId}/comments?limit=100`)),
      meBob: await ok(req("GET", "/me", { key: bob.apiKey })),
      meAlice: await ok(req("GET", "/me", { key: alice.apiKey })),
    };
  }

  beforeAll(async () => {
    sys = await startSystem(mode, { env: { JOINS_PER_SOURCE_PER_DAY: "1000" } });
    const req = httpClient(sys.baseUrl);
    const alice = await joinAgent(sys, "alice");
    const bob = await joinAgent(sys, "bob");
    const p = await req("POST", "/posts", {
      key: alice.apiKey,
      body: { title: "Target proposal", body: "the post every bad request aims at", is_arch_design: true },
    });
    expect(p.status).toBe(201);
    const other = await req("POST", "/posts", {
      key: bob.apiKey,
      body: { title: "Another post", body: "so the lists have two pages", is_arch_design: false },
    });
    expect(other.status).toBe(201);
    for (const [who, text] of [
      [alice, "first comment"],
      [bob, "second comment"],
    ] as const) {
      expect(
        (await req("POST", `/posts/${p.body.id}/comments`, { key: who.apiKey, body: { body: text } })).status,
      ).toBe(201);
    }
    expect((await req("POST", `/posts/${p.body.id}/vote`, { key: bob.apiKey, body: { vote: 1 } })).status).toBe(200);
    expect((await req("POST", `/posts/${p.body.id}/vote`, { key: alice.apiKey, body: { vote: -1 } })).status).toBe(200);
    await grantSeat(sys, bob, "councillor");
    const newPage = await req("GET", "/posts?sort=new&limit=1");
    const hotPage = await req("GET", "/posts?sort=hot&limit=1");
    expect(typeof newPage.body.nextCursor).toBe("string");
    expect(typeof hotPage.body.nextCursor).toBe("string");
    ctx = {
      req,
      baseUrl: sys.baseUrl,
      adminToken: sys.adminToken,
      alice,
      bob,
      postId: p.body.id,
      newCursor: newPage.body.nextCursor,
      hotCursor: hotPage.body.nextCursor,
    };
    // the setup's own events (the seat's inbox item, counts, heat) land first: "stored nothing"
    // compares against a settled system, not one whose consumers are still at work (docs/design/tests.md#the-settled-bus)
    await waitForSettled(sys);
    before = await snapshot();
    // the fixture is what the comparisons below assume
    expect(before.detailAsBob).toMatchObject({ votes: { for: 1, against: 1, score: 0 }, commentCount: 2, myVote: 1 });
    expect((before.newest as { items: unknown[] }).items).toHaveLength(2);
    expect(before.meBob).toMatchObject({ seats: ["councillor"] });
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it.each(CASES)("$label → $code", async ({ label, code, send }) => {
    expectProblem(await send(ctx), code, label);
  });

  it("answers the refused requests with a requestId of the caller's choosing when one is sent", async () => {
    const r = await ctx.req("POST", "/posts", {
      key: ctx.bob.apiKey,
      body: { ...GOOD_POST, title: "" },
      headers: { "x-request-id": "bad-input-42" },
    });
    expectProblem(r, "invalid_request");
    expect(r.body.requestId).toBe("bad-input-42");
  });

  it("stored nothing from any refused request: lists, the target post, its comments and votes, /me", async () => {
    // not even a post's updatedAt or heat may have moved (the daily-limit counters are checked below)
    const after = await snapshot();
    expect(after).toEqual(before);
  });

  it("accepts input exactly at the limits and stores it as sent (the refusals above are not off by one)", async () => {
    const { req, bob, postId } = ctx;
    const title = rep("🦀", 200);
    const body = rep("b", 39_999) + "é";
    const p = await req("POST", "/posts", { key: bob.apiKey, body: { title, body, is_arch_design: false } });
    expect(p.status).toBe(201);
    expect(p.body.title).toBe(title);
    expect((await req("GET", `/posts/${p.body.id}`)).body).toMatchObject({ title, body });
    const ascii = await req("POST", "/posts", {
      key: bob.apiKey,
      body: { title: rep("a", 200), body: "  padded  ", is_arch_design: true },
    });
    expect(ascii.status).toBe(201);
    expect(ascii.body.body).toBe("  padded  ");
    const c = await req("POST", `/posts/${postId}/comments`, { key: bob.apiKey, body: { body: rep("💬", 10_000) } });
    expect(c.status).toBe(201);
    expect(c.body.body).toBe(rep("💬", 10_000));
    const url = "https://a.example/" + rep("p", 2_048 - "https://a.example/".length);
    const j = await req("POST", "/join", { body: { name: rep("🤖", 64), url } });
    expect(j.status).toBe(201);
    const me = await req("GET", "/me", { key: j.body.apiKey });
    expect(me.body).toMatchObject({ name: rep("🤖", 64), url });
    const v = await req("POST", `/posts/${postId}/vote`, { key: j.body.apiKey, body: { vote: -1 } });
    expect(v.status).toBe(200);
    expect(v.body.votes).toEqual({ for: 1, against: 2, score: -1 });
    expect((await req("GET", "/posts?limit=100")).body.items).toHaveLength(4);
    expect((await req("GET", "/posts?limit=1&kind=all&sort=new")).status).toBe(200);
  });
});

describe.each(clockModes)("daily limits answer 429 quota_exceeded with Retry-After (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  const clock = new OffsetClock();
  /** The agent whose day the first test uses up, and its post with two comments. */
  let exhausted: { a: Agent; target: string } | undefined;

  beforeAll(async () => {
    sys = await startSystem(mode, {
      env: { POSTS_PER_DAY: "2", COMMENTS_PER_DAY: "2", JOINS_PER_SOURCE_PER_DAY: "3" },
      clock,
    });
    req = httpClient(sys.baseUrl);
    // run the day at 12:00 UTC on the services' clock: no UTC midnight can pass mid-test
    const sinceMidnight = clock.now().getTime() % DAY_MS;
    clock.advance((DAY_MS / 2 - sinceMidnight + DAY_MS) % DAY_MS);
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("refuses the 4th join, 3rd post and 3rd comment of a day, counting only what was accepted", async () => {
    // refused joins, posts and comments do not use up the day's allowance
    expectProblem(await req("POST", "/join", { body: { name: "" } }), "invalid_request", "blank join");
    expectProblem(
      await req("POST", "/join", { body: { name: "x", url: "ftp://x.example" } }),
      "invalid_request",
      "ftp join",
    );
    const agents: Agent[] = [];
    for (const name of ["one", "two", "three"]) {
      const r = await req("POST", "/join", { body: { name } });
      expect({ name, status: r.status }).toEqual({ name, status: 201 });
      agents.push(r.body);
    }
    const fourth = await req("POST", "/join", { body: { name: "four" } });
    expectRateLimited(fourth, "4th join", clock);
    expect(fourth.text).not.toMatch(/sk_src_/);

    const [a, b] = agents as [Agent, Agent];
    expectProblem(
      await req("POST", "/posts", { key: a.apiKey, body: { title: " ", body: "b", is_arch_design: true } }),
      "invalid_request",
      "blank post",
    );
    expectProblem(
      await req("POST", `/posts/${UNKNOWN_POST}/comments`, { key: a.apiKey, body: { body: "nobody home" } }),
      "not_found",
      "comment on unknown post",
    );
    const ids: string[] = [];
    for (const n of [1, 2]) {
      const r = await req("POST", "/posts", {
        key: a.apiKey,
        body: { title: `allowed ${n}`, body: "b", is_arch_design: n === 1 },
      });
      expect({ n, status: r.status }).toEqual({ n, status: 201 });
      ids.push(r.body.id);
    }
    const third = await req("POST", "/posts", {
      key: a.apiKey,
      body: { title: "one too many", body: "b", is_arch_design: true },
    });
    expectRateLimited(third, "3rd post", clock);
    const listed = (await req("GET", "/posts?sort=new&limit=100")).body.items as { id: string; title: string }[];
    expect(listed.map((p) => p.title).sort()).toEqual(["allowed 1", "allowed 2"]);
    // the limit is per identity: another agent may still post
    const byB = await req("POST", "/posts", {
      key: b.apiKey,
      body: { title: "b posts", body: "b", is_arch_design: false },
    });
    expect(byB.status).toBe(201);

    const target = ids[0]!;
    for (const n of [1, 2]) {
      const r = await req("POST", `/posts/${target}/comments`, { key: a.apiKey, body: { body: `comment ${n}` } });
      expect({ n, status: r.status }).toEqual({ n, status: 201 });
    }
    const thirdComment = await req("POST", `/posts/${target}/comments`, { key: a.apiKey, body: { body: "comment 3" } });
    expectRateLimited(thirdComment, "3rd comment", clock);
    const detail = await req("GET", `/posts/${target}`);
    expect(detail.body.commentCount).toBe(2);
    expect(detail.body.comments.map((c: { body: string }) => c.body)).toEqual(["comment 1", "comment 2"]);
    // still refused on a retry, and on another post
    expectRateLimited(
      await req("POST", `/posts/${ids[1]}/comments`, { key: a.apiKey, body: { body: "elsewhere" } }),
      "3rd comment elsewhere",
      clock,
    );
    expectRateLimited(
      await req("POST", "/posts", { key: a.apiKey, body: { title: "again", body: "b", is_arch_design: false } }),
      "3rd post retried",
      clock,
    );
    expect(
      (await req("POST", `/posts/${target}/comments`, { key: b.apiKey, body: { body: "b comments" } })).status,
    ).toBe(201);
    expect((await req("GET", `/posts/${target}`)).body.commentCount).toBe(3);
    expect((await req("GET", "/posts?limit=100")).body.items).toHaveLength(3);
    // votes are not a daily-limited action
    expect((await req("POST", `/posts/${target}/vote`, { key: a.apiKey, body: { vote: 1 } })).status).toBe(200);
    exhausted = { a, target };
  });

  it("gives the allowance back when Retry-After has passed (the next UTC day), not before", async () => {
    expect(exhausted).toBeDefined();
    const { a, target } = exhausted!;
    const newPost = (title: string) =>
      req("POST", "/posts", { key: a.apiKey, body: { title, body: "b", is_arch_design: false } });
    const newComment = (body: string) => req("POST", `/posts/${target}/comments`, { key: a.apiKey, body: { body } });
    const retryAfter = expectRateLimited(await newPost("still today"), "post before the wait", clock);

    // The test clock runs on (real time + offset): a margin of a minute keeps "before" before on a
    // loaded machine (2 s was crossed by three slow requests, and the day had turned).
    const MARGIN_S = 60;
    clock.advance((retryAfter - MARGIN_S) * 1000);
    expectRateLimited(await newPost("still today"), "post a minute before Retry-After ends", clock);
    expectRateLimited(await newComment("still today"), "comment a minute before Retry-After ends", clock);
    expectRateLimited(
      await req("POST", "/join", { body: { name: "five" } }),
      "join a minute before Retry-After ends",
      clock,
    );

    clock.advance((MARGIN_S + 1) * 1000);
    const tomorrow = await newPost("tomorrow 1");
    expect(tomorrow.status).toBe(201);
    expect(Date.parse(tomorrow.body.createdAt) % DAY_MS).toBeLessThan(60_000);
    expect((await newComment("tomorrow")).status).toBe(201);
    expect((await req("POST", "/join", { body: { name: "five" } })).status).toBe(201);
    // a whole new day's allowance: one more post, then refused until the following midnight
    expect((await newPost("tomorrow 2")).status).toBe(201);
    const again = expectRateLimited(await newPost("tomorrow 3"), "3rd post of the next day", clock);
    expect(again).toBeGreaterThan(86_400 - 120);
    const titles = (await req("GET", "/posts?sort=new&limit=100")).body.items.map((p: { title: string }) => p.title);
    expect(titles.filter((t: string) => t.startsWith("tomorrow")).sort()).toEqual(["tomorrow 1", "tomorrow 2"]);
    expect(titles).not.toContain("still today");
  });
});
