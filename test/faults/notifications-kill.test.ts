import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createTestDatabase,
  deleteTestStream,
  hasNats,
  hasPostgres,
  httpClient,
  TEST_NATS_URL,
  uniqueBusNames,
  type TestDatabase,
} from "@aps/testkit";
import { joinAgents } from "../support/fixtures.js";
import { eventually, ok, type Req } from "./support.js";

/** Retries `f` until it returns without throwing; resolves its value. */
async function until<T>(f: () => Promise<T>, ms: number): Promise<T> {
  let v: T | undefined;
  await eventually(async () => {
    v = await f();
  }, ms);
  return v as T;
}
import { startTopology } from "./topology.js";
import { waitForSettled } from "../support/settle.js";

/**
 * Fault: the notifications service killed (SIGKILL) mid-stream in the distributed topology and
 * started again (docs/design/notifications.md). Comments keep coming while it is dead; afterwards the
 * author's inbox holds exactly one item per comment (none lost, none duplicated), the feed
 * resumes from the cursor taken before the kill with every later event once and in order, and
 * the webhook receiver has every event (at least once; exactly once per webhook-id).
 */
const real = (await hasPostgres()) && (await hasNats());
const TIMEOUT = 240_000;

(real ? describe : describe.skip)(
  "a killed notifications service (distributed topology)" + (real ? "" : " (SKIPPED: no real PostgreSQL + NATS)"),
  () => {
    let db: TestDatabase;
    let topo: Awaited<ReturnType<typeof startTopology>>;
    let req: Req;
    const names = uniqueBusNames();
    const got: { id: string; body: string }[] = [];
    const server = createServer((r, res) => {
      let body = "";
      r.on("data", (c: Buffer) => (body += c.toString("utf8")));
      r.on("end", () => {
        got.push({ id: String(r.headers["webhook-id"]), body });
        res.writeHead(200).end();
      });
    });

    beforeAll(async () => {
      db = await createTestDatabase();
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      topo = await startTopology({
        DATABASE_URL: db.url,
        NATS_URL: TEST_NATS_URL,
        NATS_STREAM: names.stream,
        APS_SUBJECT_PREFIX: names.prefix,
        WEBHOOK_ALLOW_PRIVATE: "1",
        WEBHOOK_RETRY_SCHEDULE: "100,100,100,100,100",
        WEBHOOK_POLL_MS: "50",
      });
      req = httpClient(topo.baseUrl);
    }, TIMEOUT);
    afterAll(async () => {
      await topo?.stop();
      await new Promise<void>((r) => server.close(() => r()));
      await deleteTestStream(names.stream);
      await db?.drop();
    }, TIMEOUT);

    it(
      "loses and duplicates no notification, and the feed resumes from a cursor after the restart",
      async () => {
        const [author, b, c] = await joinAgents(req, 3, "notif-kill");
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
        ok(
          await req("POST", "/me/webhooks", { key: author!.apiKey, body: { url, events: ["comment.created"] } }),
          201,
          "webhook",
        );
        const p = ok(
          await req("POST", "/posts", {
            key: author!.apiKey,
            body: { title: "Kill me", body: "b", is_arch_design: false },
          }),
          201,
          "post",
        );
        const comment = async (i: number) =>
          ok(
            await req("POST", `/posts/${p.id}/comments`, { key: (i % 2 ? b : c)!.apiKey, body: { body: `c${i}` } }),
            201,
            `comment ${i}`,
          );
        for (let i = 0; i < 10; i++) await comment(i);
        // the feed's cursor before the kill
        const before = await until(async () => {
          const r = await req("GET", "/events?types=comment.created&limit=100");
          expect(r.body.items.length).toBeGreaterThanOrEqual(5);
          return r.body;
        }, 30_000);
        const cursor = before.items.at(-1).cursor as string;
        const seenBefore = new Set<string>(before.items.map((e: any) => e.data.commentId));

        const dying = comment(10); // in flight while the process dies
        expect(await topo.children.notifications.kill("SIGKILL")).toBeNull();
        await dying;
        for (let i = 11; i < 20; i++) await comment(i);
        expect((await req("GET", "/me/notifications", { key: author!.apiKey })).status).toBe(503);
        await topo.children.notifications.start();
        for (let i = 20; i < 30; i++) await comment(i);

        const items = await until(async () => {
          const r = await req("GET", "/me/notifications?limit=100", { key: author!.apiKey });
          expect(r.status).toBe(200);
          expect(r.body.items.filter((n: any) => n.type === "comment.created").length).toBeGreaterThanOrEqual(30);
          return r.body.items as any[];
        }, 60_000);
        // nothing more can arrive once every outbox is empty and every durable consumer has
        // acknowledged everything: a delivery the killed process held comes again only after
        // ack_wait, a failed one after its backoff — later than any short sleep (docs/design/tests.md#the-settled-bus)
        const settledMs = await waitForSettled(
          { kind: "jetstream", databaseUrl: db.url, natsUrl: TEST_NATS_URL, stream: names.stream },
          90_000,
        );
        const again = await req("GET", "/me/notifications?limit=100", { key: author!.apiKey });
        const comments = again.body.items.filter((n: any) => n.type === "comment.created");
        expect(comments.length).toBe(30);
        expect(new Set(comments.map((n: any) => n.data.commentId)).size).toBe(30);
        expect(items.length).toBe(again.body.items.length);

        // the feed from the cursor of before the kill: every later comment once, in cursor order
        const rest = await req("GET", `/events?types=comment.created&after=${cursor}&limit=100`);
        const ids = rest.body.items.map((e: any) => e.data.commentId as string);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids.length + seenBefore.size).toBe(30);
        for (const id of ids) expect(seenBefore.has(id)).toBe(false);
        const cursors = rest.body.items.map((e: any) => Number(e.cursor));
        expect(cursors).toEqual([...cursors].sort((x, y) => x - y));

        // the receiver: every comment, one webhook-id each (retries reuse it)
        await eventually(async () => {
          expect(new Set(got.map((g) => JSON.parse(g.body).data.commentId)).size).toBe(30);
        }, 60_000);
        const idsPerComment = new Map<string, Set<string>>();
        for (const g of got) {
          const k = JSON.parse(g.body).data.commentId as string;
          idsPerComment.set(k, (idsPerComment.get(k) ?? new Set()).add(g.id));
        }
        for (const [, s] of idsPerComment) expect(s.size).toBe(1);
        console.log(
          `[faults/notifications-kill] 30 inbox items, none duplicated; every consumer settled ${settledMs} ms after the 30th arrived`,
        );
      },
      TIMEOUT,
    );
  },
);
