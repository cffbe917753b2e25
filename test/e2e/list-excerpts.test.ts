import { join } from "node:path";
import { hasNats, hasPostgres, httpClient, startNode, type TestProcess } from "@aps/testkit";
import { grantSeat, joinAgent } from "../support/fixtures.js";
import { ROOT, startSystem, type System } from "../support/system.js";

/**
 * Lists over the gRPC message limit (docs/design/edge.md#lists-and-cursors). 70 posts whose bodies are
 * 16 000 four-byte code points (64 000 bytes of UTF-8, just under the 64 KiB JSON cap) made a
 * page of 100 ≈ 4.5 MB: the gateway's gRPC client refused it (4 MiB receive default) and
 * `GET /v1/posts?limit=100`, `/v1/agents/{id}/posts?limit=100` and `/v1/agenda?limit=100`
 * answered 500 with no log line. Lists now carry `excerpt` (500 code points) and `bodyLength`;
 * the full body only on `/posts/{id}`. The gateway here is a process of its own calling the
 * services over real gRPC (the in-jest system would call them in-process).
 */
const real = (await hasPostgres()) && (await hasNats());
const POSTS = 70;
const CHARS = 16_000;

(real ? describe : describe.skip)(
  "list pages of long multibyte posts over gRPC (real PostgreSQL + NATS, gateway process)" +
    (real ? "" : " (SKIPPED: no real PostgreSQL + NATS)"),
  () => {
    let sys: System;
    let gw: TestProcess;
    let req: ReturnType<typeof httpClient>;

    beforeAll(async () => {
      sys = await startSystem("real", { env: { POSTS_PER_DAY: "1000" } });
      gw = await startNode(
        [join(ROOT, "services/gateway/dist/main.js")],
        {
          ...sys.env,
          ...sys.grpcAddrs,
          APS_INTERNAL_TOKEN: sys.internalToken, // the all-in-one's gRPC ports check callers
          PORT: "0",
          HOST: "127.0.0.1",
          LOG_LEVEL: "warn",
          APS_ADMIN_TOKEN: sys.adminToken,
          RATE_LIMIT_KEYED_PER_MINUTE: "1000000",
          RATE_LIMIT_ANON_PER_MINUTE: "1000000",
        },
        /APS gateway ready at (\S+)/,
      );
      req = httpClient(gw.ready);
    }, 240_000);
    afterAll(async () => {
      await gw?.stop();
      await sys?.stop();
    });

    it("answers /posts, /agents/{id}/posts and /agenda with 100-item pages of excerpts; the full body only on /posts/{id}", async () => {
      const author = await joinAgent(gw.ready, "long writer");
      // three seats, so one nomination (one approval) keeps the case in review, on the agenda
      const council = [];
      for (let i = 0; i < 3; i++) {
        const c = await joinAgent(gw.ready, `councillor ${i}`);
        await grantSeat({ baseUrl: gw.ready, adminToken: sys.adminToken }, c, "councillor");
        council.push(c);
      }
      const chief = council[0]!;
      const ids: string[] = [];
      for (let i = 0; i < POSTS; i++) {
        const body = `${i} ` + "😀".repeat(CHARS - 4);
        const r = await req("POST", "/posts", {
          key: author.apiKey,
          body: { title: `long ${i}`, body, is_arch_design: true },
        });
        expect(r.status).toBe(201);
        ids.push(r.body.id);
        expect((await req("POST", `/posts/${r.body.id}/nominate`, { key: chief.apiKey })).status).toBe(200);
      }
      const pages = {
        posts: await req("GET", "/posts?limit=100&sort=new"),
        agentPosts: await req("GET", `/agents/${author.agentId}/posts?limit=100`),
        agenda: await req("GET", "/agenda?limit=100"),
      };
      for (const [name, page] of Object.entries(pages)) {
        expect([name, page.status]).toEqual([name, 200]);
        const mine = page.body.items.filter((p: { id: string }) => ids.includes(p.id));
        expect([name, mine.length]).toEqual([name, POSTS]);
        for (const p of mine) {
          expect(p.body).toBeUndefined();
          expect([...p.excerpt].length).toBe(500);
          expect(p.bodyLength).toBeGreaterThan(15_000);
        }
        // ≈ 2 KB per item instead of ≈ 64 KB
        expect(JSON.stringify(page.body).length).toBeLessThan(POSTS * 3_000);
      }
      const detail = await req("GET", `/posts/${ids[0]}`);
      expect(detail.status).toBe(200);
      expect([...detail.body.body].length).toBe(detail.body.bodyLength);
      const listed = pages.posts.body.items.find((p: { id: string }) => p.id === ids[0]);
      expect(detail.body.body.startsWith(listed.excerpt)).toBe(true);
      expect(listed.bodyLength).toBe(detail.body.bodyLength);
    });
  },
);
