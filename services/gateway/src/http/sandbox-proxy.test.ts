import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { createLogger } from "@aps/platform";
import { refuseTestKeys, sandboxProxy } from "./sandbox-proxy.js";

const log = createLogger("sandbox-proxy-test", "silent");

/** Listens on loopback; resolves the server and its origin. */
async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; origin: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A live app: the proxy (or, without a sandbox, the refusal of sk_test_ keys), then a route answering every other request itself. */
function liveApp(sandboxUrl: string | undefined) {
  const app = express();
  app.set("trust proxy", "loopback");
  app.use(sandboxUrl ? sandboxProxy(sandboxUrl, log) : refuseTestKeys);
  app.use((_req, res) => res.json({ answeredBy: "live" }));
  return app;
}

describe("sandboxProxy (docs/design/agents.md#sandbox)", () => {
  const servers: Server[] = [];
  afterAll(async () => {
    for (const s of servers) await new Promise((r) => s.close(r));
  });

  it("sends sk_test_ requests and the sandbox's paths to the sandbox, body and client address included; the rest stays live", async () => {
    const seen: { method: string; url: string; forwarded: string | undefined; body: string }[] = [];
    const sandbox = await listen((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        seen.push({ method: req.method!, url: req.url!, forwarded: req.headers["x-forwarded-for"] as string, body });
        res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ answeredBy: "sandbox" }));
      });
    });
    const live = await listen(liveApp(sandbox.origin));
    servers.push(sandbox.server, live.server);

    const post = await fetch(`${live.origin}/v1/posts?sort=new`, {
      method: "POST",
      headers: {
        authorization: "Bearer sk_test_abc",
        "content-type": "application/json",
        "x-forwarded-for": "203.0.113.9",
      },
      body: JSON.stringify({ title: "t" }),
    });
    expect([post.status, await post.json()]).toEqual([201, { answeredBy: "sandbox" }]);
    // X-Forwarded-For is the address the live gateway judged (its peer, loopback, trusted here: the client's)
    expect(seen[0]).toEqual({
      method: "POST",
      url: "/v1/posts?sort=new",
      forwarded: "203.0.113.9",
      body: '{"title":"t"}',
    });

    for (const path of ["/v1/sandbox/join", "/v1/test/clock", "/v1/test/clock/advance"]) {
      const r = await fetch(`${live.origin}${path}`);
      expect([path, await r.json()]).toEqual([path, { answeredBy: "sandbox" }]);
    }
    for (const [path, auth] of [
      ["/v1/posts", "Bearer sk_src_abc"],
      ["/v1/posts", undefined],
      ["/v1/testing", undefined],
      ["/v1/sandboxes", undefined],
    ] as const) {
      const r = await fetch(`${live.origin}${path}`, { headers: auth ? { authorization: auth } : {} });
      expect([path, auth, await r.json()]).toEqual([path, auth, { answeredBy: "live" }]);
    }
    expect(seen).toHaveLength(4);
  });

  it("answers 503 upstream_unavailable when the sandbox is down", async () => {
    const gone = await listen((_req, res) => res.end());
    await new Promise((r) => gone.server.close(r));
    const live = await listen(liveApp(gone.origin));
    servers.push(live.server);
    const r = await fetch(`${live.origin}/v1/test/clock`);
    expect(r.status).toBe(503);
    expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(((await r.json()) as { code: string }).code).toBe("upstream_unavailable");
  });

  it("without a sandbox: an sk_test_ key is 401 saying why; a sandbox path is left to its route (404 there); the rest stays live", async () => {
    const live = await listen(liveApp(undefined));
    servers.push(live.server);
    const path = await fetch(`${live.origin}/v1/sandbox/join`, { method: "POST" });
    expect(await path.json()).toEqual({ answeredBy: "live" });
    const key = await fetch(`${live.origin}/v1/posts`, { headers: { authorization: "Bearer sk_test_abc" } });
    expect(key.status).toBe(401);
    expect(await key.json()).toMatchObject({ code: "unauthenticated", detail: expect.stringContaining("sk_test_") });
    expect(await (await fetch(`${live.origin}/v1/posts`)).json()).toEqual({ answeredBy: "live" });
  });
});
