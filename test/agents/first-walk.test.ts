import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { httpClient, type HttpResult } from "@aps/testkit";
import { startSystem, type System } from "../support/system.js";
import { waitStrictly } from "../support/wait.js";

/**
 * A new agent's walk with only what the service serves: from `GET /v1` it
 * follows the index's links to skill.md and the OpenAPI document, and from then on finds every
 * route it calls by the document's operationIds — no path written in this test but `/v1` itself.
 * It joins, proposes, watches another agent's post and finds a third agent's reply to that post in
 * its inbox and its attention view, then proves its domain (a real HTTP server on loopback serves
 * `/.well-known/aps-agent.json`; WEBHOOK_ALLOW_PRIVATE=1 as in the webhook and owner tests) and
 * sees `verified` on its public record. Raw HTTP on purpose: this is what an agent without our
 * client does. Embedded: every step is gateway, identity, forum and notifications work that every
 * mode runs alike.
 */
const TIMEOUT_MS = 120_000;

interface Operation {
  method: string;
  path: string;
}

describe("a new agent's walk from GET /v1, by the served documents only (embedded)", () => {
  let sys: System;
  let site: Server;
  let siteUrl = "";
  let ownerDoc: unknown;
  let root: ReturnType<typeof httpClient>;
  const ops = new Map<string, Operation>();

  /** Calls the operation `id` of the served OpenAPI document, its path parameters filled in order from `params`. */
  async function call<T = any>(
    id: string,
    opts: { key?: string; body?: unknown; params?: string[]; query?: string } = {},
  ): Promise<HttpResult<T>> {
    const op = ops.get(id);
    if (!op) throw new Error(`the OpenAPI document has no operation ${id}`);
    const values = [...(opts.params ?? [])];
    const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const v = values.shift();
      if (v === undefined) throw new Error(`${id}: no value for {${name}}`);
      return encodeURIComponent(v);
    });
    // the document's paths start with /v1, the client's base URL ends with it
    return root<T>(op.method, path.replace(/^\/v1/, "") + (opts.query ? `?${opts.query}` : ""), opts);
  }

  beforeAll(async () => {
    site = createServer((req, res) => {
      if (req.url !== "/.well-known/aps-agent.json" || ownerDoc === undefined) return void res.writeHead(404).end();
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(ownerDoc));
    });
    await new Promise<void>((r) => site.listen(0, "127.0.0.1", r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/agent`;
    sys = await startSystem("embedded", { env: { WEBHOOK_ALLOW_PRIVATE: "1" } });
    root = httpClient(sys.baseUrl);
  }, TIMEOUT_MS);
  afterAll(async () => {
    await sys?.stop();
    site?.closeAllConnections();
    await new Promise((r) => site?.close(r));
  });

  it(
    "GET /v1 → skill.md and openapi.json → join → propose → watch → a reply in the inbox → a verified domain",
    async () => {
      // 1. The index names the documents; an agent reads skill.md and the OpenAPI document from it.
      const index = await root<{ links: Record<string, { href: string }> }>("GET", "");
      expect(index.status).toBe(200);
      const origin = new URL(sys.baseUrl).origin;
      const skill = await fetch(origin + index.body.links.skill!.href);
      expect(skill.status).toBe(200);
      const skillText = await skill.text();
      expect(Buffer.byteLength(skillText)).toBeLessThanOrEqual(20_480);
      const doc = (await (await fetch(origin + index.body.links.openapi!.href)).json()) as {
        paths: Record<string, Record<string, { operationId?: string }>>;
      };
      for (const [path, item] of Object.entries(doc.paths))
        for (const [method, op] of Object.entries(item))
          if (op.operationId) ops.set(op.operationId, { method: method.toUpperCase(), path });
      // skill.md names the routes the walk takes, so an agent reading only it finds them too
      for (const id of ["join", "createPost", "createComment", "listMyNotifications", "getMyAttention", "verifyOwner"])
        expect({ id, inSkill: skillText.includes(`\`${ops.get(id)!.path.replace(/^\/v1/, "")}\``) }).toEqual({
          id,
          inSkill: true,
        });

      // 2. Three agents join by the index's join link (the same operation the document names).
      expect(index.body.links.join!.href).toBe(ops.get("join")!.path);
      const joined = async (name: string, url?: string) => {
        const r = await call<{ agentId: string; apiKey: string }>("join", { body: { name, ...(url ? { url } : {}) } });
        expect({ name, status: r.status }).toEqual({ name, status: 201 });
        return { id: r.body.agentId, key: r.body.apiKey };
      };
      const walker = await joined("walker", siteUrl);
      const author = await joined("author");
      const replier = await joined("replier");

      // 3. Its first proposal.
      const mine = await call<{ id: string }>("createPost", {
        key: walker.key,
        body: { title: "Shard the event feed by post", body: "A first proposal.", is_arch_design: true },
      });
      expect(mine.status).toBe(201);
      expect((await call("getPost", { params: [mine.body.id] })).body).toMatchObject({
        title: "Shard the event feed by post",
        author: { agentId: walker.id },
      });

      // 4. It watches another agent's post; a third agent replies there; the reply reaches its inbox.
      const theirs = await call<{ id: string }>("createPost", {
        key: author.key,
        body: { title: "Retire the v0 API", body: "Someone else's post.", is_arch_design: false },
      });
      expect(theirs.status).toBe(201);
      const watch = await call("setWatch", { key: walker.key, params: [theirs.body.id], body: { level: "watching" } });
      expect(watch.status).toBe(200);
      const reply = await call<{ id: string }>("createComment", {
        key: replier.key,
        params: [theirs.body.id],
        body: { body: "What replaces it for old agents?" },
      });
      expect(reply.status).toBe(201);
      type Item = { type: string; postId: string | null; data?: Record<string, unknown> };
      let inbox: Item[] = [];
      await waitStrictly(
        "the reply in the watcher's inbox",
        async () => {
          inbox = (await call<{ items: Item[] }>("listMyNotifications", { key: walker.key, query: "limit=50" })).body
            .items;
          return inbox.some((i) => i.type === "comment.created" && i.postId === theirs.body.id);
        },
        { timeoutMs: 30_000, intervalMs: 200, show: () => inbox },
      );
      // the author of the post it watches and the replier get nothing from its watching
      const att = await call<{ nextCheckAt: string }>("getMyAttention", { key: walker.key });
      expect(att.status).toBe(200);
      expect(Date.parse(att.body.nextCheckAt)).toBeGreaterThan(Date.now());

      // 5. Its domain: the site names it, the service checks it, the public record shows it.
      ownerDoc = { agentId: walker.id };
      const verified = await call<{ verified: { domain: string; at: string } }>("verifyOwner", { key: walker.key });
      expect(verified.status).toBe(200);
      expect(verified.body.verified.domain).toBe("127.0.0.1");
      const record = await call<{ verified: { domain: string } | null }>("getAgent", { params: [walker.id] });
      expect(record.body.verified).toEqual(verified.body.verified);
      // an agent whose site does not name it gets a problem document, not a badge
      const other = await call("verifyOwner", { key: author.key });
      expect(other.status).toBe(422);
      expect(other.body.code).toBe("verification_failed");
    },
    TIMEOUT_MS,
  );
});
