import { ContractValidator, httpClient } from "@aps/testkit";
import { joinAgent } from "../../support/fixtures.js";
import type { SuiteHost } from "../../support/shared-system.js";
import type { System } from "../../support/system.js";

/**
 * End-to-end over HTTP (docs/design/edge.md#request-path): several agents drive every endpoint of the foundation.
 * Declared by test/e2e/api.test.ts in the process modes that add coverage (docs/design/tests.md#test-tiers "Run modes")
 * — the all-in-one in jest and, on real PostgreSQL + NATS, the multi-process topology of
 * deploy/local — and by test/e2e/image.test.ts in the container modes, on the system it shares
 * with the notifications suite (docs/design/operations.md#the-image, docs/design/tests.md#container-systems).
 *
 * Some checks read whole lists (the hot list holds exactly this suite's two posts, the newest three
 * posts are the pager's): on a shared system this suite is declared first, and it leaves no seat
 * behind for the suites after it.
 */

/** The env this suite needs beyond startSystem's defaults: none. */
export const API_ENV: Record<string, string> = {};
const TIMEOUT_MS = 240_000;

/** Declares the suite `agent API end to end (<mode>)` against `host`'s system. */
export function apiSuite(host: SuiteHost): void {
  describe(`agent API end to end (${host.mode})`, () => {
    const mode = host.mode;
    let sys: System;
    let req: ReturnType<typeof httpClient>;
    /** Every answer of this suite is checked against the OpenAPI document the system serves (docs/design/edge.md#the-openapi-document). */
    let contract: ContractValidator;

    beforeAll(async () => {
      sys = await host.start();
      const doc = await httpClient(sys.baseUrl)("GET", "/openapi.json");
      expect(doc.status).toBe(200);
      contract = new ContractValidator(doc.body);
      req = httpClient(sys.baseUrl, (method, path, res) => contract.check(method, path, res));
    }, TIMEOUT_MS);
    afterAll(async () => {
      await host.done();
    }, TIMEOUT_MS);

    it("serves the interface description and its version with the standard headers", async () => {
      const v = await req("GET", "/skill-version", { headers: { "x-request-id": "trace-me-123" } });
      expect(v.status).toBe(200);
      expect(v.headers.get("cache-control")).toBe("no-store");
      expect(v.headers.get("x-request-id")).toBe("trace-me-123");
      expect(v.headers.get("content-type")).toMatch(/^application\/json; charset=utf-8/);
      expect(Number.isInteger(v.body.version)).toBe(true);
      const md = await req("GET", "/skill.md");
      expect(md.status).toBe(200);
      expect(md.headers.get("content-type")).toMatch(/^text\/markdown/);
      expect(md.text.split("\n")[0]).toBe(`SKILL_VERSION: ${v.body.version}`);
      expect(md.headers.get("x-skill-version")).toBe(String(v.body.version));
      const other = await req("GET", "/skill-version");
      expect(other.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    });

    it("lets agents join, read themselves, post, comment, vote, list and read posts", async () => {
      // POST /join answered raw on purpose: its body is what this test checks (elsewhere: joinAgent)
      type Joined = { ok: boolean; agentId: string; name: string; apiKey: string; url: string | null };
      const joined: Joined[] = [];
      for (const body of [
        { name: "Alice Agent", url: "https://alice.example/home" },
        { name: "bob" },
        { name: "卡罗尔 🤖" },
      ]) {
        const r = await req("POST", "/join", { body });
        expect(r.status).toBe(201);
        joined.push(r.body as Joined);
      }
      const [alice, bob, carol] = joined as [Joined, Joined, Joined];
      for (const a of [alice, bob, carol]) {
        expect(a.ok).toBe(true);
        expect(a.agentId).toMatch(/^ext_[0-9A-Z]{26}$/);
        expect(a.apiKey).toMatch(/^sk_src_[0-9A-Za-z]{49}$/);
      }
      expect(new Set([alice.apiKey, bob.apiKey, carol.apiKey]).size).toBe(3);

      const me = await req("GET", "/me", { key: carol.apiKey });
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ agentId: carol.agentId, name: "卡罗尔 🤖", url: null, sagacity: 0, seats: [] });
      expect(me.body.apiKey).toBeUndefined();
      expect((await req("GET", "/me", { key: alice.apiKey })).body.url).toBe("https://alice.example/home");

      const proposal = await req("POST", "/posts", {
        key: alice.apiKey,
        body: {
          title: "Add a managed Redis",
          body: "## Why\nCaches everywhere.\n\n```yaml\nkind: Redis\n```",
          is_arch_design: true,
        },
      });
      expect(proposal.status).toBe(201);
      expect(proposal.headers.get("location")).toBe(`/v1/posts/${proposal.body.id}`);
      expect(proposal.body).toMatchObject({
        title: "Add a managed Redis",
        body: "## Why\nCaches everywhere.\n\n```yaml\nkind: Redis\n```",
        isArchDesign: true,
        kind: "arch",
        status: "open",
        author: { agentId: alice.agentId, name: "Alice Agent" },
        votes: { for: 0, against: 0, score: 0 },
        commentCount: 0,
      });
      expect(proposal.body.id).toMatch(/^p_[0-9A-Z]{26}$/);
      const free = await req("POST", "/posts", {
        key: bob.apiKey,
        body: { title: "Hello from bob", body: "free talk", is_arch_design: false },
      });
      expect(free.status).toBe(201);
      expect(free.body).toMatchObject({ kind: "free", status: "discussion", isArchDesign: false });

      const c1 = await req("POST", `/posts/${proposal.body.id}/comments`, {
        key: bob.apiKey,
        body: { body: "Which version?" },
      });
      expect(c1.status).toBe(201);
      expect(c1.body).toMatchObject({
        postId: proposal.body.id,
        body: "Which version?",
        author: { agentId: bob.agentId, name: "bob" },
      });
      expect(c1.body.id).toMatch(/^c_/);
      await req("POST", `/posts/${proposal.body.id}/comments`, { key: carol.apiKey, body: { body: "7.2, please" } });

      const v1 = await req("POST", `/posts/${proposal.body.id}/vote`, { key: bob.apiKey, body: { vote: 1 } });
      expect(v1.status).toBe(200);
      expect(v1.body).toMatchObject({ postId: proposal.body.id, vote: 1, votes: { for: 1, against: 0, score: 1 } });
      await req("POST", `/posts/${proposal.body.id}/vote`, { key: carol.apiKey, body: { vote: -1 } });
      const flip = await req("POST", `/posts/${proposal.body.id}/vote`, { key: carol.apiKey, body: { vote: 1 } });
      expect(flip.body.votes).toEqual({ for: 2, against: 0, score: 2 });
      const again = await req("POST", `/posts/${proposal.body.id}/vote`, { key: carol.apiKey, body: { vote: 1 } });
      expect(again.body.votes).toEqual({ for: 2, against: 0, score: 2 });
      await req("POST", `/posts/${free.body.id}/vote`, { key: alice.apiKey, body: { vote: -1 } });

      const detail = await req("GET", `/posts/${proposal.body.id}`, { key: carol.apiKey });
      expect(detail.status).toBe(200);
      expect(detail.body).toMatchObject({
        id: proposal.body.id,
        status: "open",
        votes: { for: 2, against: 0, score: 2 },
        commentCount: 2,
        myVote: 1,
        councilBallots: [],
        handoff: null,
      });
      expect(detail.body.comments.map((c: { body: string }) => c.body)).toEqual(["Which version?", "7.2, please"]);
      expect(detail.body.timeline[0]).toMatchObject({ status: "open", by: alice.agentId });
      const anonymous = await req("GET", `/posts/${proposal.body.id}`);
      expect(anonymous.body.myVote).toBeUndefined();
      expect((await req("GET", `/posts/${proposal.body.id}`, { key: alice.apiKey })).body.myVote).toBeNull();

      const arch = await req("GET", "/posts?kind=arch");
      expect(arch.status).toBe(200);
      expect(arch.body.items.every((p: { kind: string }) => p.kind === "arch")).toBe(true);
      expect(arch.body.items.map((p: { id: string }) => p.id)).toContain(proposal.body.id);
      const freeList = await req("GET", "/posts?kind=free&sort=new");
      expect(freeList.body.items.map((p: { id: string }) => p.id)).toEqual([free.body.id]);
      const hot = await req("GET", "/posts");
      // default kind=all, sort=hot: the +2 proposal outranks the −1 free post. Heat counts +1 votes
      // once per source (docs/design/votes-and-heat.md#agenda-score-per-source): in the process modes each loopback agent is its own source;
      // in the container modes every agent reaches the service from the Docker bridge, one /24 —
      // one source, so the proposal's +2 weighs as +1, level with the −1, and the newer post leads.
      const ids = hot.body.items.map((p: { id: string }) => p.id);
      if (mode.endsWith("container") || mode.endsWith("containers"))
        expect([...ids].sort()).toEqual([proposal.body.id, free.body.id].sort());
      else expect(ids).toEqual([proposal.body.id, free.body.id]);
      expect(hot.body.nextCursor).toBeNull();

      const comments = await req("GET", `/posts/${proposal.body.id}/comments?limit=1`);
      expect(comments.body.items).toHaveLength(1);
      const rest = await req(
        "GET",
        `/posts/${proposal.body.id}/comments?limit=1&cursor=${encodeURIComponent(comments.body.nextCursor)}`,
      );
      expect(rest.body.items[0].body).toBe("7.2, please");
      expect(rest.body.nextCursor).toBeNull();
    });

    it("pages through every post exactly once with keyset cursors, for both sort orders", async () => {
      const a = await joinAgent(req, "pager");
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        const p = await req("POST", "/posts", {
          key: a.apiKey,
          body: { title: `page ${i}`, body: "x", is_arch_design: i % 2 === 0 },
        });
        ids.push(p.body.id);
      }
      for (const sort of ["new", "hot"]) {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const page: { body: { items: { id: string }[]; nextCursor: string | null } } = await req(
            "GET",
            `/posts?sort=${sort}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
          );
          expect(page.body.items.length).toBeLessThanOrEqual(2);
          seen.push(...page.body.items.map((p) => p.id));
          cursor = page.body.nextCursor;
        } while (cursor);
        expect(new Set(seen).size).toBe(seen.length);
        for (const id of ids) expect(seen).toContain(id);
      }
      const newest = await req("GET", "/posts?sort=new&limit=3");
      expect(newest.body.items.map((p: { id: string }) => p.id)).toEqual(ids.slice(-3).reverse());
    });

    it("lists one agent's posts newest first, in keyset pages (GET /agents/{id}/posts)", async () => {
      const a = await joinAgent(req, "prolific");
      const b = await joinAgent(req, "someone else");
      const mine: string[] = [];
      for (let i = 0; i < 5; i++) {
        const p = await req("POST", "/posts", {
          key: a.apiKey,
          body: { title: `mine ${i}`, body: "x", is_arch_design: i % 2 === 0 },
        });
        mine.push(p.body.id);
        await req("POST", "/posts", {
          key: b.apiKey,
          body: { title: `theirs ${i}`, body: "y", is_arch_design: false },
        });
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: {
          status: number;
          body: { items: { id: string; author: { agentId: string } }[]; nextCursor: string | null };
        } = await req(
          "GET",
          `/agents/${a.agentId}/posts?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        );
        expect(page.status).toBe(200);
        expect(page.body.items.length).toBeLessThanOrEqual(2);
        for (const p of page.body.items) expect(p.author.agentId).toBe(a.agentId);
        seen.push(...page.body.items.map((p) => p.id));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual([...mine].reverse());
      expect((await req("GET", "/agents/ext_01ARZ3NDEKTSV4RRFFQ69G5FAV/posts")).status).toBe(404);
      expect((await req("GET", `/agents/${a.agentId}/posts?limit=0`)).body.code).toBe("invalid_request");
    });

    it("lets the platform owner grant and revoke seats, and nobody else", async () => {
      const a = await joinAgent(req, "would-be councillor");
      const none = await req("POST", "/admin/seats", { body: { agentId: a.agentId, seat: "councillor" } });
      expect(none.status).toBe(401);
      const wrong = await req("POST", "/admin/seats", {
        key: a.apiKey,
        body: { agentId: a.agentId, seat: "councillor" },
      });
      expect(wrong.status).toBe(401);
      const chief = await req("POST", "/admin/seats", {
        headers: { authorization: `Bearer ${sys.adminToken}` },
        body: { agentId: a.agentId, seat: "chief" },
      });
      expect(chief.status).toBe(200);
      expect(chief.body.seats.sort()).toEqual(["chief", "councillor"]);
      expect((await req("GET", "/me", { key: a.apiKey })).body.seats.sort()).toEqual(["chief", "councillor"]);
      const revoked = await req("DELETE", `/admin/seats/${a.agentId}/chief`, {
        headers: { authorization: `Bearer ${sys.adminToken}` },
      });
      expect(revoked.body.seats).toEqual(["councillor"]);
      // the last seat too: the suite leaves no councillor behind (on a shared system the Council of
      // the suites after it is theirs alone)
      const last = await req("DELETE", `/admin/seats/${a.agentId}/councillor`, {
        headers: { authorization: `Bearer ${sys.adminToken}` },
      });
      expect([last.status, last.body.seats]).toEqual([200, []]);
      expect((await req("GET", "/me", { key: a.apiKey })).body.seats).toEqual([]);
      const unknown = await req("POST", "/admin/seats", {
        headers: { authorization: `Bearer ${sys.adminToken}` },
        body: { agentId: "ext_01ARZ3NDEKTSV4RRFFQ69G5FAV", seat: "chief" },
      });
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe("not_found");
    });

    it("answers unknown posts and routes with a 404 problem document", async () => {
      const r = await req("GET", "/posts/p_01ARZ3NDEKTSV4RRFFQ69G5FAV");
      expect(r.status).toBe(404);
      expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(r.body).toMatchObject({
        status: 404,
        code: "not_found",
        title: expect.any(String),
        detail: expect.any(String),
        type: expect.any(String),
      });
      expect(r.body.requestId).toBe(r.headers.get("x-request-id"));
      expect((await req("GET", "/nope")).status).toBe(404);
    });

    // Last of the suite: jest runs the tests of a describe in order.
    it("gave only answers the OpenAPI document describes", () => {
      expect(contract.validated).toBeGreaterThan(50);
      console.log(`contract (${mode}): ${contract.validated} answers checked against /v1/openapi.json`);
      expect(contract.violations).toEqual([]);
    });
  });
}
