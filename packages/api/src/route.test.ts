import express, { type Response } from "express";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { ApsError, HTTP_STATUS } from "@aps/platform";
import type { identity } from "@aps/proto";
import {
  defineRoute,
  documentedOperations,
  expressPath,
  mountOrder,
  mountRoutes,
  oneOf,
  type ApiRoute,
  type RouteDeps,
} from "./route.js";
import { OPERATIONS, ROUTES } from "./index.js";
import { scopeOf, scopeRefusal, type Caller } from "./http/locals.js";
import { dryRunMiddleware } from "./http/dry-run.js";

/**
 * Routes declared once (docs/design/edge.md#routes-declared-once): the mounted handler parses the declared query and body
 * (400 before the handler runs, so bad input changes nothing), requires the caller of a `key`
 * route, and answers the handler's value with the declared status.
 */
const item = z.strictObject({ n: z.number().int(), who: z.string() });
let calls = 0;
const addItem = defineRoute({
  method: "post",
  path: "/things/{id}/items",
  operationId: "addItem",
  tag: "posts",
  summary: "test",
  access: "key",
  params: z.object({ id: z.string() }),
  query: z.strictObject({ dry: z.enum(["yes", "no"]).optional() }),
  body: { schema: z.strictObject({ n: z.number().int().min(1) }) },
  ok: { status: 201, description: "added", schema: item },
  codes: ["unauthenticated"],
  async handle({ params, body, caller }) {
    calls++;
    return { n: body.n, who: `${caller.agentId}@${params.id}` };
  },
});
const raw = defineRoute({
  method: "get",
  path: "/raw",
  operationId: "raw",
  tag: "meta",
  summary: "test",
  access: "none",
  ok: { status: 200, description: "text", schema: z.string(), mediaType: "text/plain" },
  codes: [],
  async handle({ res }) {
    res.type("text/plain").send("written by the handler");
    return undefined;
  },
});

/** A route's layer as express keeps it: its path and its handlers in order. */
interface RouteLayer {
  route?: { path: string; stack: { handle: unknown }[] };
  handle?: { stack?: RouteLayer[] };
}

/** The route layers under `router`, through the route index mountRoutes puts on it. */
function routeLayers(router: express.Router): RouteLayer[] {
  return (router.stack as RouteLayer[]).flatMap((l) => (l.route ? [l] : (l.handle?.stack ?? [])));
}

async function serve(withCaller: boolean) {
  const app = express();
  app.use(express.json());
  app.use((_req, res: Response, next) => {
    if (withCaller) res.locals.agent = { agentId: "ext_1" } as identity.Agent;
    next();
  });
  app.use(mountRoutes(express.Router(), [addItem, raw], {} as RouteDeps));
  // the problem answer's status and code as the gateway's problem handler writes them (http/problem.ts)
  app.use((err: unknown, _req: express.Request, res: Response, _next: express.NextFunction) => {
    const e = err instanceof ApsError ? err : new ApsError("internal", "internal error");
    res.status(HTTP_STATUS[e.code]).json({ code: e.code, detail: e.message });
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, close: () => new Promise((r) => server.close(r)) };
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("defineRoute (docs/design/edge.md#routes-declared-once)", () => {
  it("writes OpenAPI paths as express paths", () => {
    expect(expressPath("/posts/{id}/watch")).toBe("/posts/:id/watch");
    expect(expressPath("/agents/{agentId}")).toBe("/agents/:agentId");
    expect(expressPath("")).toBe("/");
    expect(addItem.operation).toMatchObject({ method: "post", path: "/things/{id}/items", operationId: "addItem" });
    expect(addItem.operation).not.toHaveProperty("handle");
  });

  it("answers the handler's value with the declared status, the path's params and the caller in hand", async () => {
    const s = await serve(true);
    try {
      const res = await post(`${s.base}/things/t1/items?dry=no`, { n: 3 });
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ n: 3, who: "ext_1@t1" });
      const text = await fetch(`${s.base}/raw`);
      expect(await text.text()).toBe("written by the handler");
    } finally {
      await s.close();
    }
  });

  it("refuses a bad body or query with 400 naming the field, before the handler runs", async () => {
    const s = await serve(true);
    try {
      const before = calls;
      const bad = await post(`${s.base}/things/t1/items`, { n: 0 });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ code: "invalid_request", detail: expect.stringContaining("`n`") });
      const extra = await post(`${s.base}/things/t1/items`, { n: 1, x: 1 });
      expect(extra.status).toBe(400);
      const query = await post(`${s.base}/things/t1/items?dry=maybe`, { n: 1 });
      expect(query.status).toBe(400);
      expect(((await query.json()) as { detail: string }).detail).toContain("query parameter `dry`");
      expect(calls).toBe(before);
    } finally {
      await s.close();
    }
  });

  it("answers 401 on a key route reached without a caller", async () => {
    const s = await serve(false);
    try {
      const before = calls;
      const res = await post(`${s.base}/things/t1/items`, { n: 1 });
      expect(res.status).toBe(401);
      expect(calls).toBe(before);
    } finally {
      await s.close();
    }
  });

  it("refuses to declare a key or optional route whose codes do not list 401 (its key would never be checked)", () => {
    const declare = (access: "key" | "optional" | "none") => () =>
      defineRoute({
        method: "get",
        path: "/x",
        operationId: `x_${access}`,
        tag: "meta",
        summary: "test",
        access,
        ok: { status: 200, description: "x", schema: z.string() },
        codes: [],
        handle: () => Promise.resolve("x"),
      });
    expect(declare("key")).toThrow(/x_key: a route with access "key" lists "unauthenticated"/);
    expect(declare("optional")).toThrow(/x_optional/);
    expect(declare("none")).not.toThrow();
  });

  it("runs MountOptions' middleware by the declaration: authenticate where 401 is listed, idempotency where keyed and idempotent", () => {
    const idem = defineRoute({
      method: "post",
      path: "/things",
      operationId: "idem",
      tag: "posts",
      summary: "test",
      access: "key",
      idempotent: true,
      ok: { status: 201, description: "x", schema: z.string() },
      codes: ["unauthenticated"],
      handle: () => Promise.resolve("x"),
    });
    const authenticate: express.RequestHandler = (_q, _s, next) => next();
    const idempotency: express.RequestHandler = (_q, _s, next) => next();
    const router = express.Router();
    mountRoutes(router, [addItem, raw, idem], {} as RouteDeps, { authenticate, idempotency });
    // each route's handlers in order, as express keeps them on its layer
    const stacks = routeLayers(router).map((l) => [
      l.route!.path,
      l.route!.stack.map((h) =>
        h.handle === authenticate
          ? "auth"
          : h.handle === idempotency
            ? "idem"
            : h.handle === dryRunMiddleware
              ? "dryRun"
              : "handler",
      ),
    ]);
    // every write also takes ?dryRun=true, after authentication and before idempotency (docs/design/edge.md#dry-run)
    expect(stacks).toEqual([
      ["/raw", ["handler"]],
      ["/things", ["auth", "dryRun", "idem", "handler"]],
      ["/things/:id/items", ["auth", "dryRun", "handler"]],
    ]);
  });

  /** A minimal declaration of `method path` with `access` (a 401 listed where a key is read). */
  const route = (path: string, access: "none" | "key" | "owner" = "none", extra: object = {}): ApiRoute =>
    defineRoute({
      method: "get",
      path,
      operationId: `op${path.replace(/[^a-z]/gi, "_")}`,
      tag: "meta",
      summary: "test",
      access,
      ok: { status: 200, description: "x", schema: z.string() },
      codes: access === "key" ? ["unauthenticated"] : [],
      handle: () => Promise.resolve(path),
      ...extra,
    });

  it("mounts a literal segment before a parameter at the same place, whatever the list's order", () => {
    const byId = route("/posts/{id}");
    const similar = route("/posts/similar");
    const comments = route("/posts/{id}/comments");
    const feed = route("/feeds/{feed}.atom");
    const agenda = route("/agenda");
    const order = mountOrder([byId, comments, feed, similar, agenda]).map((r) => r.operation.path);
    expect(order.indexOf("/posts/similar")).toBeLessThan(order.indexOf("/posts/{id}"));
    // otherwise the list's order holds (a stable sort)
    expect(order.indexOf("/agenda")).toBeLessThan(order.indexOf("/posts/similar"));
    expect(order).toHaveLength(5);
  });

  it("the route index sends every request where express's own walk over the mount order would (docs/design/edge.md#routes-declared-once)", async () => {
    // each served route answers its own method and path; requests: every route's path with its
    // parameters filled, in other cases, with a trailing slash, one segment more or less, and unknown
    const served = mountOrder(ROUTES).map((r) => route(r.operation.path, "none", { method: r.operation.method }));
    const listen = async (mount: (router: express.Router) => void) => {
      const app = express();
      const router = express.Router();
      mount(router);
      app.use("/v1", router);
      app.use((req, res) => res.status(404).json(`none ${req.path}`));
      const server = app.listen(0, "127.0.0.1");
      await new Promise((r) => server.once("listening", r));
      return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
    };
    const indexed = await listen((router) => mountRoutes(router, served, {} as RouteDeps));
    // express alone: every route on the one router, in the mount order
    const walked = await listen((router) => {
      for (const r of mountOrder(served)) r.mount(router, {} as RouteDeps);
    });
    try {
      const paths = new Set<string>(["", "/", "/nothing", "/nothing/at/all", "//posts", "/posts//vote"]);
      for (const r of ROUTES) {
        const p = r.operation.path.replace(/\{[^}]+\}/g, "x_1");
        for (const v of [p, `${p}/`, p.toUpperCase(), `${p}/extra`, p.split("/").slice(0, -1).join("/")]) paths.add(v);
      }
      const methods = ["GET", "POST", "PUT", "PATCH", "DELETE"];
      const answer = async (base: string, method: string, path: string) => {
        const r = await fetch(`${base}${path}`, { method });
        return `${r.status} ${await r.text()}`;
      };
      const differ: string[] = [];
      let matched = 0;
      for (const path of paths)
        for (const method of methods) {
          const [a, b] = await Promise.all([answer(indexed.base, method, path), answer(walked.base, method, path)]);
          if (a !== b) differ.push(`${method} ${path}: index ${a}, express ${b}`);
          if (a.startsWith("200")) matched++;
        }
      expect(differ).toEqual([]);
      // the requests reached routes (not only 404s on both sides)
      expect(matched).toBeGreaterThan(ROUTES.length);
    } finally {
      indexed.server.close();
      walked.server.close();
    }
  });

  it("mounts every route of the served list so that no path is shadowed by a parameter of an earlier one", () => {
    const paths = mountOrder(ROUTES).map((r) => `${r.operation.method} ${r.operation.path}`);
    const shadows: string[] = [];
    paths.forEach((later, j) => {
      const [m2, p2] = later.split(" ") as [string, string];
      const s2 = p2.split("/");
      for (const earlier of paths.slice(0, j)) {
        const [m1, p1] = earlier.split(" ") as [string, string];
        const s1 = p1.split("/");
        // the earlier route takes every request of the later one when each of its segments is
        // the later one's or a parameter where the later one has a literal
        if (
          m1 === m2 &&
          p1 !== p2 &&
          s1.length === s2.length &&
          s1.every((seg, i) => seg === s2[i] || seg.startsWith("{"))
        )
          shadows.push(`${earlier} shadows ${later}`);
      }
    });
    expect(shadows).toEqual([]);
  });

  it("mounts the owner's routes only with the owner's guard, before their handler, and never authenticates them", () => {
    const seats = route("/admin/seats", "owner");
    const me = route("/me", "key");
    const authenticate: express.RequestHandler = (_q, _s, next) => next();
    const guard: express.RequestHandler = (_q, _s, next) => next();
    const layers = (router: express.Router) =>
      routeLayers(router).map((l) => [
        l.route!.path,
        l.route!.stack.map((h) => (h.handle === authenticate ? "auth" : h.handle === guard ? "owner" : "handler")),
      ]);
    const without = mountRoutes(express.Router(), [seats, me], {} as RouteDeps, { authenticate });
    expect(layers(without)).toEqual([["/me", ["auth", "handler"]]]);
    const withOwner = mountRoutes(express.Router(), [seats, me], {} as RouteDeps, { authenticate, owner: [guard] });
    expect(layers(withOwner)).toEqual([
      ["/me", ["auth", "handler"]],
      ["/admin/seats", ["owner", "handler"]],
    ]);
  });

  it("documents a continued operation once and every served operation exactly once", () => {
    const first = route("/skill.md");
    const rest = route("/skill.md", "none", { continues: first });
    expect(documentedOperations([first, rest])).toEqual([first.operation]);
    const ids = OPERATIONS.map((o) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain("getSkill");
    expect(ROUTES.length).toBe(ids.length + ROUTES.filter((r) => r.continues).length);
  });

  it("refuses a write made with an OAuth token lacking its scope, naming it (docs/design/agents.md#oauth-for-mcp)", () => {
    const scopeOfOp = (method: string, path: string) => {
      const op = OPERATIONS.find((o) => o.method === method && o.path === path)!;
      return scopeOf(op.method, op.path, op.tag);
    };
    expect(scopeOfOp("get", "/posts")).toBe("read");
    expect(scopeOfOp("post", "/posts")).toBe("write");
    expect(scopeOfOp("post", "/posts/{id}/vote")).toBe("vote");
    expect(scopeOfOp("post", "/posts/{id}/nominate")).toBe("council");
    expect(scopeOfOp("post", "/posts/{id}/council")).toBe("council");
    expect(scopeOfOp("get", "/agenda")).toBe("read");
    const token = (scopes: string[]) => ({ agentId: "ext_1", oauthScopes: scopes }) as unknown as Caller;
    expect(scopeRefusal(token(["read"]), "get", "/posts", "posts")).toBeUndefined();
    expect(scopeRefusal(token(["read"]), "post", "/posts", "posts")?.message).toMatch(/lacks the scope 'write'/);
    expect(scopeRefusal(token(["read", "write"]), "post", "/posts", "posts")).toBeUndefined();
    expect(scopeRefusal(token(["read", "write"]), "post", "/posts/{id}/vote", "posts")?.code).toBe("forbidden");
    expect(scopeRefusal(token(["read", "vote"]), "post", "/posts/{id}/vote", "posts")).toBeUndefined();
    expect(scopeRefusal(token(["read", "write"]), "post", "/posts/{id}/nominate", "council")?.message).toMatch(
      /'council'/,
    );
    // an API key (no oauthScopes) is not concerned
    expect(scopeRefusal({ agentId: "ext_1" } as Caller, "post", "/posts", "posts")).toBeUndefined();
  });

  it("oneOf passes a listed value and throws on another", () => {
    expect(oneOf(["a", "b"] as const, "b", "x")).toBe("b");
    expect(() => oneOf(["a", "b"] as const, "c", "watch level")).toThrow(/watch level "c" is not one of a, b/);
  });
});
