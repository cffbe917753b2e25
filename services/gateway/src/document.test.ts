import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createLogger } from "@aps/platform";
import { createApp } from "./app.js";
import { routesOf } from "./http/route-list.js";
import { loadSkill } from "./skill.js";
import { buildOpenApi } from "@aps/api/openapi/document";

/** A real logger that writes nothing (the app asks it which levels are on). */
const quiet = createLogger("gateway-test", "silent");
const skill = loadSkill();
/** The gateway with every route (admin on) and clients that these tests never call. */
const app = createApp({
  identity: {} as never,
  forum: {} as never,
  council: {} as never,
  skill,
  log: quiet,
  adminToken: "t",
});
const doc = buildOpenApi(skill.version).document as {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, { operationId?: string; security?: unknown[]; responses: object }>>;
};

/** `METHOD /path` of every operation in `paths`. */
function operationsOf(paths: typeof doc.paths): string[] {
  return Object.entries(paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
}

describe("the OpenAPI document", () => {
  it("is OpenAPI 3.1 with info.version = SKILL_VERSION", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe(String(skill.version));
  });

  it("describes exactly the /v1 routes the gateway serves", () => {
    // one operation per route (GET /skill.md has two handlers: the original and its translations)
    const routes = [
      ...new Set(
        routesOf((app as unknown as { router: { stack: unknown[] } }).router.stack).filter((r) =>
          /^\/v1(\/|$)/.test(r.split(" ")[1]!),
        ),
      ),
    ].sort();
    expect(routes.length).toBeGreaterThan(30);
    expect(operationsOf(doc.paths).sort()).toEqual(routes);
    // The check notices an operation the document lacks.
    const { ["/v1/agenda"]: _, ...fewer } = doc.paths;
    expect(operationsOf(fewer).sort()).not.toEqual(routes);
  });

  it("gives every operation an id, a security requirement, a success and problem answers", () => {
    for (const item of Object.values(doc.paths))
      for (const op of Object.values(item)) {
        expect(op.operationId).toMatch(/^[a-z][A-Za-z]+$/);
        expect(Array.isArray(op.security)).toBe(true);
        const statuses = Object.keys(op.responses);
        expect(statuses.some((s) => /^2\d\d$/.test(s))).toBe(true);
        expect(statuses).toEqual(expect.arrayContaining(["400", "429", "500", "503"]));
      }
  });

  it("has no nullable named schema rendered as allOf [$ref, {type: [object, null]}] (it would refuse null)", () => {
    const bad: string[] = [];
    const walk = (v: unknown, at: string): void => {
      if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}/${i}`));
      else if (v && typeof v === "object") {
        const all = (v as { allOf?: { $ref?: string; type?: unknown }[] }).allOf;
        if (all?.some((x) => x.$ref) && all.some((x) => [x.type].flat().includes("null"))) bad.push(at);
        for (const [k, x] of Object.entries(v)) walk(x, `${at}/${k}`);
      }
    };
    walk(doc, "#");
    expect(bad).toEqual([]);
  });
});

describe("GET /v1/openapi.json", () => {
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, "127.0.0.1", () => resolve(s));
    });
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it("serves the document without a key, with a strong ETag and 304 on a match", async () => {
    const res = await fetch(`${origin}/v1/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const etag = res.headers.get("etag")!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(res.headers.get("x-skill-version")).toBe(String(skill.version));
    expect(await res.json()).toEqual(doc);
    const again = await fetch(`${origin}/v1/openapi.json`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    const stale = await fetch(`${origin}/v1/openapi.json`, { headers: { "if-none-match": '"other"' } });
    expect(stale.status).toBe(200);
  });
});
