import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { httpClient } from "@aps/testkit";
import { ROOT, routeModes, startSystem, type System } from "../support/system.js";

/**
 * HTTP hardening of the gateway (docs/design/edge.md#headers-cors-and-security): helmet's default headers on every response,
 * `Cache-Control: no-store` kept, the CORS policy (any origin, bearer keys, no credentials,
 * preflight 204 with the documented headers), and request heads capped at 16 KiB (431, the server
 * keeps serving).
 */
const modes = await routeModes("http-hardening.test.ts"); // docs/design/tests.md#test-tiers "Run modes": the gateway in jest and as its own process

const ALLOWED = ["authorization", "content-type", "idempotency-key", "x-request-id", "if-none-match", "if-match"];
const EXPOSED = [
  "x-request-id",
  "x-skill-version",
  "retry-after",
  "location",
  "idempotent-replayed",
  "aps-dry-run",
  "aps-dry-run-effects",
  "ratelimit-policy",
  "ratelimit",
  "etag",
  "x-poll-interval",
];
const list = (h: string | null) =>
  (h ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean)
    .sort();

/** Sends a raw GET with one extra header of `size` bytes; resolves with the status code of the answer. */
function rawGetStatus(baseUrl: string, path: string, size: number): Promise<number> {
  const u = new URL(baseUrl + path);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname === "localhost" ? "127.0.0.1" : u.hostname);
    let data = "";
    sock.setEncoding("latin1");
    sock.on("data", (c: string) => {
      data += c;
      const m = /^HTTP\/1\.1 (\d{3})/.exec(data);
      if (m) {
        sock.destroy();
        resolve(Number(m[1]));
      }
    });
    sock.on("error", reject);
    sock.on("close", () => reject(new Error(`closed without a status line: ${JSON.stringify(data.slice(0, 200))}`)));
    sock.write(
      `GET ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nX-Padding: ${"a".repeat(size)}\r\nConnection: close\r\n\r\n`,
    );
  });
}

describe.each(modes)("HTTP hardening (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  beforeAll(async () => {
    sys = await startSystem(mode);
    req = httpClient(sys.baseUrl);
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("sends helmet's default headers and no-store on answers, errors and the server root", async () => {
    const root = sys.baseUrl.replace(/\/v1$/, "");
    const answers = [
      await req("GET", "/posts"),
      await req("GET", "/skill.md"),
      await req("GET", "/nope"),
      await req("POST", "/posts", { body: {} }),
      await fetch(`${root}/healthz`),
    ];
    for (const r of answers) {
      const h = r.headers;
      expect(h.get("x-content-type-options")).toBe("nosniff");
      expect(h.get("x-powered-by")).toBeNull();
      expect(h.get("x-frame-options")).toBe("SAMEORIGIN");
      expect(h.get("content-security-policy")).toContain("default-src 'self'");
      expect(h.get("strict-transport-security")).toMatch(/max-age=\d+/);
      expect(h.get("referrer-policy")).toBe("no-referrer");
      expect(h.get("cache-control")).toBe("no-store");
      expect(h.get("x-request-id")).toBeTruthy();
    }
  });

  it("answers a CORS preflight from any origin with 204 and the documented headers", async () => {
    for (const [path, method] of [
      ["/posts", "POST"],
      ["/me/keys/rotate", "POST"],
      ["/posts/p_01ARZ3NDEKTSV4RRFFQ69G5FAV", "GET"],
    ] as const) {
      const r = await fetch(sys.baseUrl + path, {
        method: "OPTIONS",
        headers: {
          origin: "https://random-origin-4711.example",
          "access-control-request-method": method,
          "access-control-request-headers": "authorization, content-type, idempotency-key, x-request-id",
        },
      });
      expect(r.status).toBe(204);
      expect(await r.text()).toBe("");
      expect(r.headers.get("access-control-allow-origin")).toBe("*");
      expect(list(r.headers.get("access-control-allow-headers"))).toEqual([...ALLOWED].sort());
      expect(list(r.headers.get("access-control-allow-methods"))).toEqual(
        expect.arrayContaining([method.toLowerCase()]),
      );
      expect(r.headers.get("access-control-allow-credentials")).toBeNull();
    }
  });

  it("allows in a CORS preflight every method the OpenAPI document's operations use (PUT too)", async () => {
    const doc = (await req("GET", "/openapi.json")).body as { paths: Record<string, Record<string, unknown>> };
    const used = new Set(Object.values(doc.paths).flatMap((item) => Object.keys(item).map((m) => m.toUpperCase())));
    expect(used).toContain("PUT");
    for (const method of used) {
      const r = await fetch(`${sys.baseUrl}/posts`, {
        method: "OPTIONS",
        headers: { origin: "https://elsewhere.example", "access-control-request-method": method },
      });
      expect({ method, allowed: list(r.headers.get("access-control-allow-methods")) }).toEqual({
        method,
        allowed: expect.arrayContaining([method.toLowerCase()]),
      });
    }
  });

  it("lets any origin read and write with a bearer key, exposing the documented headers", async () => {
    const origin = { origin: "http://elsewhere.test:3000" };
    const read = await req("GET", "/posts", { headers: origin });
    expect(read.status).toBe(200);
    expect(read.headers.get("access-control-allow-origin")).toBe("*");
    expect(list(read.headers.get("access-control-expose-headers"))).toEqual([...EXPOSED].sort());
    const joined = await req("POST", "/join", { body: { name: "cross-origin agent" }, headers: origin });
    expect(joined.status).toBe(201);
    const post = await req("POST", "/posts", {
      key: joined.body.apiKey,
      body: { title: "From a browser", body: "CORS write", is_arch_design: false },
      headers: origin,
    });
    expect(post.status).toBe(201);
    expect(post.headers.get("access-control-allow-origin")).toBe("*");
    expect(post.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("keeps idle connections 65 s, past the proxies' 60 s idle timeout, and says so in Keep-Alive (docs/design/edge.md#connections-and-timeouts)", async () => {
    // clients (undici's fetch, proxies) reuse a connection for the advertised timeout less a margin;
    // Node's default 5 s made them reuse connections the gateway was closing (ECONNRESET under load)
    const res = await fetch(`${sys.baseUrl}/skill-version`);
    await res.arrayBuffer();
    expect(res.headers.get("connection")).toBe("keep-alive");
    expect(res.headers.get("keep-alive")).toBe("timeout=65");
  });

  it("refuses a request head over 16 KiB with 431 and keeps serving", async () => {
    expect(await rawGetStatus(sys.baseUrl, "/skill-version", 12 * 1024)).toBe(200);
    expect(await rawGetStatus(sys.baseUrl, "/skill-version", 17 * 1024)).toBe(431);
    expect(await rawGetStatus(sys.baseUrl, "/skill-version", 64 * 1024)).toBe(431);
    const big = await fetch(`${sys.baseUrl}/skill-version`, { headers: { "x-padding": "b".repeat(20 * 1024) } });
    expect(big.status).toBe(431);
    expect(big.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const problem = await big.json();
    expect(problem).toMatchObject({
      status: 431,
      code: "headers_too_large",
      type: "/docs/errors.md#headers_too_large",
    });
    expect(problem.requestId).toBe(big.headers.get("x-request-id"));
    const longUrl = await fetch(`${sys.baseUrl}/knowledge/search?q=${"q".repeat(70_000)}`);
    expect(longUrl.status).toBe(431);
    expect((await longUrl.json()).code).toBe("headers_too_large");
    const after = await req("GET", "/skill-version");
    expect(after.status).toBe(200);
    const skillVersion = Number(
      /^SKILL_VERSION: (\d+)/.exec(readFileSync(join(ROOT, "services/gateway/skill.md"), "utf8"))![1],
    );
    expect(after.body).toEqual({ version: skillVersion });
  });
});
