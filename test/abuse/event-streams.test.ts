import { request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createLogger } from "@aps/platform";
import { loadConfig, startGateway, type GatewayHandle } from "@aps/gateway";
import { eventually, queryRows, registerApsOrigin, waitUntil } from "@aps/testkit";
import { joinAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * Event streams are bounded, and push needs no polling
 * (docs/design/events.md#event-stream-sse), on `GET /v1/events/stream`:
 * - at most EVENT_STREAMS_PER_SOURCE streams per source (docs/design/identity-and-abuse.md#client-source-and-abuse-source: an IPv4 /24 here) — 30 streams
 *   from one source that never read: 10 answer 200, the 20 others 429 problem+json with Retry-After;
 *   at most EVENT_STREAMS_PER_REPLICA per gateway process (503 with Retry-After beyond);
 * - writes wait for `drain`, and a client whose unsent buffer passes EVENT_STREAM_MAX_BUFFER_BYTES
 *   is dropped: the gateway's heap stays flat while 12 MB of events are published to 10 streams
 *   that never read, and a client that reads gets every event;
 * - a stream ends cleanly after EVENT_STREAM_MAX_AGE_MS, and Last-Event-ID resumes it without loss;
 * - a stream without a cursor starts at the live end;
 * - one shared feed reader per gateway: 20 idle streams make no feed reads of their own.
 *
 * Mode `real` (every service in this jest process on the real PostgreSQL and NATS): the rule is the
 * gateway's, the gateway's heap is this process's, and the test can publish megabytes of events as
 * feed rows straight into the notifications schema (what its ingest writes) instead of creating
 * thousands of posts. A second gateway on the same services tests max age and the replica cap.
 */
const modes = (await availableModes()).filter((m) => m === "real");
if (modes.length === 0)
  console.warn("[event-streams.test] NO REAL PostgreSQL + NATS: the event-stream tests are SKIPPED");

/** A test's bound on a hang, stretched on a loaded machine like the waits inside it. */
const TIMEOUT_MS = 60_000;
/** A system start on a loaded CI machine can pass a minute; a hook that times out leaks its system into the next files. */
const HOOK_TIMEOUT_MS = 180_000;
/** Unsent bytes after which a stream is dropped, in this test (the default is 1 MiB). */
const MAX_BUFFER = 512 * 1024;
/**
 * Max stream age of the second gateway, ms: long beside the work in it (an event published as the
 * stream opens reaches it within one 500 ms feed poll), so a loaded machine still gets events
 * through before the stream's end.
 */
const MAX_AGE_MS = 4_000;
const LIST_EVENTS = "/aps.notifications.v1.NotificationsService/ListEvents";

/** V8's collector, to measure the retained heap (exposed at run time: jest does not pass --expose-gc). */
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const retainedHeap = () => (gc(), gc(), process.memoryUsage().heapUsed);

/** A stream opened with node:http whose answer is never read (left paused after the headers). */
interface RawStream {
  status: number;
  headers: IncomingMessage["headers"];
  /** The answer's text when it is not a stream (a problem document). */
  text: string;
  req: ClientRequest;
}

/** Opens `GET /events/stream` as a client that never reads it (`xff`: the client address behind the trusted loopback proxy). */
function openRaw(baseUrl: string, headers: Record<string, string> = {}): Promise<RawStream> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}/events/stream`, { headers }, (res) => {
      if (res.statusCode === 200) {
        // never read (no 'data' listener, never resumed): the response stays paused, the socket's
        // receive window fills and the gateway sees backpressure
        resolve({ status: 200, headers: res.headers, text: "", req });
        return;
      }
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, req }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** A stream read as it arrives: the `id:` of each event, whether `retry:` came, and whether the server ended it. */
interface ReadStream {
  ids: string[];
  retry: boolean;
  ended: boolean;
  /** Resolves when the server ends the stream. */
  done: Promise<void>;
  abort(): void;
}

/** Opens and reads `GET /events/stream` with fetch (the contract check sees the request). */
async function openReading(baseUrl: string, headers: Record<string, string> = {}): Promise<ReadStream> {
  const ctrl = new AbortController();
  const res = await fetch(`${baseUrl}/events/stream`, { headers, signal: ctrl.signal });
  expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/event-stream; charset=utf-8"]);
  const out: ReadStream = { ids: [], retry: false, ended: false, done: Promise.resolve(), abort: () => ctrl.abort() };
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  out.done = (async () => {
    let pending = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        pending += decoder.decode(value, { stream: true });
        const frames = pending.split("\n\n");
        pending = frames.pop()!;
        for (const f of frames) {
          if (/^retry: \d+$/m.test(f)) out.retry = true;
          const id = /^id: (\d+)$/m.exec(f);
          if (id && /^data: /m.test(f)) out.ids.push(id[1]!);
        }
      }
      out.ended = true;
    } catch {
      // aborted by the test
    }
  })();
  return out;
}

/** The sum of a Prometheus counter's series whose labels contain every `k="v"` of `match`. */
async function metric(origin: string, name: string, match: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(match).every(([k, v]) => line.includes(`${k}="${v}"`))) sum += Number(line.split(" ").pop());
  }
  return sum;
}

describe.each(modes)("event streams are bounded (%s)", (mode) => {
  let sys: System;
  let origin: string;
  const raw: RawStream[] = [];
  /** Publishes `n` public events of `bytes` each as feed rows; resolves their cursors, oldest first. */
  let publish: (n: number, bytes?: number) => Promise<string[]>;

  beforeAll(async () => {
    sys = await startSystem(mode, {
      env: {
        TRUSTED_PROXIES: "loopback",
        EVENT_STREAMS_PER_SOURCE: "10",
        EVENT_STREAM_MAX_BUFFER_BYTES: String(MAX_BUFFER),
      },
    });
    origin = new URL(sys.baseUrl).origin;
    let batch = 0;
    publish = async (n, bytes = 100) => {
      const tag = `${Date.now()}-${batch++}`;
      const rows = await queryRows<{ seq: string }>(
        sys.env!.DATABASE_URL!,
        `INSERT INTO notifications.feed_events (event_id, type, occurred_at, data)
         SELECT 'bulk-${tag}-' || i, 'post.created', now(),
                jsonb_build_object('postId', 'post_${tag}_' || i, 'title', repeat('x', ${bytes}))
         FROM generate_series(1, ${n}) AS i ORDER BY i RETURNING seq::text`,
      );
      return rows.map((r) => r.seq).sort((a, b) => Number(a) - Number(b));
    };
  }, HOOK_TIMEOUT_MS);
  afterAll(async () => {
    for (const s of raw) s.req.destroy();
    await sys?.stop();
  });

  it(
    "30 streams from one source that never read: 10 are served, the 20 others get 429 with Retry-After; another source still gets one",
    async () => {
      // 30 clients of one /24 behind the trusted proxy (one source, docs/design/identity-and-abuse.md#client-source-and-abuse-source), all at once
      const opened = await Promise.all(
        Array.from({ length: 30 }, (_, i) => openRaw(sys.baseUrl, { "x-forwarded-for": `203.0.113.${i + 1}` })),
      );
      raw.push(...opened);
      const statuses = opened.map((s) => s.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(20);
      for (const s of opened.filter((o) => o.status === 429)) {
        expect(s.headers["content-type"]).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(s.text).code).toBe("rate_limited");
        expect(Number(s.headers["retry-after"])).toBeGreaterThan(0);
      }
      // the 31st, seen by the contract check
      const more = await fetch(`${sys.baseUrl}/events/stream`, { headers: { "x-forwarded-for": "203.0.113.99" } });
      expect([more.status, ((await more.json()) as { code: string }).code]).toEqual([429, "rate_limited"]);
      expect(Number(more.headers.get("retry-after"))).toBeGreaterThan(0);
      const other = await openReading(sys.baseUrl, { "x-forwarded-for": "198.51.100.7" });
      other.abort();
    },
    TIMEOUT_MS,
  );

  it(
    "the 10 streams that never read are dropped once their unsent buffer passes the limit; heap stays flat; a reading client gets every event",
    async () => {
      const dropped0 = await metric(origin, "aps_event_stream_ends_total", { reason: "slow_client" });
      const reader = await openReading(sys.baseUrl, { "x-forwarded-for": "198.51.100.7" });
      const heap0 = retainedHeap();
      // 12 MB of events (12,000 of ~1 KB), each of the never-reading 10 streams is sent all of it
      const cursors: string[] = [];
      for (let i = 0; i < 4; i++) cursors.push(...(await publish(3_000, 1_000)));
      await eventually(async () => expect(reader.ids.length).toBeGreaterThanOrEqual(cursors.length), 30_000);
      expect(reader.ids).toEqual(cursors);
      await eventually(async () =>
        expect((await metric(origin, "aps_event_stream_ends_total", { reason: "slow_client" })) - dropped0).toBe(10),
      );
      const grown = retainedHeap() - heap0;
      console.log(
        `[event-streams] heap growth while 12 MB were published to 10 never-reading streams: ${(grown / 2 ** 20).toFixed(1)} MiB`,
      );
      expect(grown).toBeLessThan(32 * 2 ** 20);
      // their places are free again: the source opens a stream
      const again = await openReading(sys.baseUrl, { "x-forwarded-for": "203.0.113.50" });
      again.abort();
      reader.abort();
    },
    TIMEOUT_MS,
  );

  it(
    "one agent (a request with a key) holds at most EVENT_STREAMS_PER_AGENT (3) of its network's streams; a neighbour on the same /24 still gets one; a bad key is 401",
    async () => {
      const nat = (i: number) => ({ "x-forwarded-for": `192.0.2.${i}` });
      const greedy = (await joinAgent(sys, "stream_greedy", { headers: nat(200) })).apiKey;
      const neighbour = (await joinAgent(sys, "stream_neighbour", { headers: nat(200) })).apiKey;
      const as = (key: string, i: number) => ({ ...nat(i), authorization: `Bearer ${key}` });
      const held = await Promise.all([1, 2, 3].map((i) => openRaw(sys.baseUrl, as(greedy, i))));
      expect(held.map((h) => h.status)).toEqual([200, 200, 200]);
      const fourth = await fetch(`${sys.baseUrl}/events/stream`, { headers: as(greedy, 4) });
      const problem = (await fourth.json()) as { code: string; detail: string };
      expect([fourth.status, problem.code]).toEqual([429, "rate_limited"]);
      expect(problem.detail).toMatch(/EVENT_STREAMS_PER_AGENT/);
      const next = await openReading(sys.baseUrl, as(neighbour, 5));
      next.abort();
      const bad = await fetch(`${sys.baseUrl}/events/stream`, { headers: as("sk_src_not_a_key", 6) });
      expect(bad.status).toBe(401);
      // a place comes back when a stream ends
      held[0]!.req.destroy();
      await eventually(async () => {
        const r = await openReading(sys.baseUrl, as(greedy, 7));
        r.abort();
      });
      for (const h of held) h.req.destroy();
    },
    TIMEOUT_MS,
  );

  it(
    "a stream without a cursor starts at the live end",
    async () => {
      await publish(3);
      const s = await openReading(sys.baseUrl, { "x-forwarded-for": "192.0.2.7" });
      const [marker] = await publish(1);
      await eventually(async () => expect(s.ids.length).toBeGreaterThanOrEqual(1));
      s.abort();
      expect(s.ids).toEqual([marker]);
      expect(s.retry).toBe(true);
    },
    TIMEOUT_MS,
  );

  it(
    "20 idle streams make no feed reads of their own: one shared reader per gateway",
    async () => {
      // two /24s no other test here opens streams from: the streams the tests above destroy leave
      // their source's count only when the gateway has seen them close, and a leftover one would
      // make the tenth of a /24 the eleventh (429, EVENT_STREAMS_PER_SOURCE)
      const idle = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          openRaw(sys.baseUrl, { "x-forwarded-for": i < 10 ? `198.18.10.${i + 10}` : `198.18.11.${i}` }),
        ),
      );
      raw.push(...idle);
      expect(idle.map((s) => s.status)).toEqual(Array(20).fill(200));
      const feedReads = () => metric(origin, "aps_grpc_server_handled_total", { method: LIST_EVENTS });
      const reads0 = await feedReads();
      const t0 = Date.now();
      // watch the feed until it has been read 8 times, then compare the reads with the time they took
      let reads = 0;
      await waitUntil(
        "8 feed reads with 20 idle streams open",
        async () => (reads = (await feedReads()) - reads0) >= 8,
      );
      const seconds = (Date.now() - t0) / 1000;
      console.log(`[event-streams] feed reads with 20 idle streams: ${reads} in ${seconds.toFixed(1)} s`);
      // one poll every 500 ms for all of them (before: one per stream every 500 ms, 40 a second)
      expect(reads).toBeLessThanOrEqual(Math.ceil(seconds * 2) + 2);
      for (const s of idle) s.req.destroy();
    },
    TIMEOUT_MS,
  );

  describe(`a gateway with EVENT_STREAM_MAX_AGE_MS=${MAX_AGE_MS} and EVENT_STREAMS_PER_REPLICA=2`, () => {
    let gw: GatewayHandle;
    beforeAll(async () => {
      const log = createLogger("event-streams-test", "warn");
      gw = await startGateway(
        loadConfig({
          ...sys.env,
          ...sys.grpcAddrs,
          APS_INTERNAL_TOKEN: sys.internalToken, // the all-in-one's gRPC ports check callers
          HOST: "127.0.0.1",
          PORT: "0",
          EVENT_STREAM_MAX_AGE_MS: String(MAX_AGE_MS),
          EVENT_STREAMS_PER_REPLICA: "2",
        }),
        log,
      );
      registerApsOrigin(gw.baseUrl);
    }, HOOK_TIMEOUT_MS);
    afterAll(async () => {
      await gw?.stop();
    });

    it(
      "a third stream gets 503 with Retry-After; a stream ends at its max age and Last-Event-ID resumes it without loss",
      async () => {
        const maxAgeEnds0 = await metric(origin, "aps_event_stream_ends_total", { reason: "max_age" });
        const first = await openReading(gw.baseUrl);
        const opened = Date.now();
        const second = await openRaw(gw.baseUrl);
        raw.push(second);
        expect(second.status).toBe(200);
        const third = await fetch(`${gw.baseUrl}/events/stream`);
        expect([third.status, ((await third.json()) as { code: string }).code]).toEqual([503, "upstream_unavailable"]);
        expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
        second.req.destroy();

        // events keep coming while the stream reaches its max age and the client resumes: one at a
        // time, each once a stream on the other gateway has it (the feed's own pace, no clock), until
        // the first stream ended, a resumed one was opened and three more were published after that
        const observer = await openReading(sys.baseUrl, { "x-forwarded-for": "198.18.0.7" });
        const published: string[] = [];
        let publishing = true;
        let resumedAt: number | undefined;
        const publisher = (async () => {
          try {
            while (!first.ended || resumedAt === undefined || published.length < resumedAt + 3) {
              const [cursor] = await publish(1);
              published.push(cursor!);
              await waitUntil(`event ${cursor} on the observing stream`, () => observer.ids.includes(cursor!), {
                timeoutMs: 20_000,
              });
            }
          } finally {
            publishing = false;
            observer.abort();
          }
        })();
        // the deadline is the bound on its max age (+ 2 s), stretched on a loaded machine
        await waitUntil("the first stream to end at its max age", () => first.ended, { timeoutMs: MAX_AGE_MS + 2_000 });
        const age = Date.now() - opened;
        expect({ ended: first.ended, retry: first.retry }).toEqual({ ended: true, retry: true });
        // it ended because of its age, and not before 90 % of it
        expect((await metric(origin, "aps_event_stream_ends_total", { reason: "max_age" })) - maxAgeEnds0).toBe(1);
        expect(age).toBeGreaterThanOrEqual(MAX_AGE_MS * 0.9 - 100);
        expect(first.ids.length).toBeGreaterThan(0);

        // resume with Last-Event-ID, as EventSource does (each resumed stream ends at its max age
        // too), until the publisher is done and everything arrived
        const got = [...first.ids];
        while (publishing || got.at(-1) !== published.at(-1)) {
          const next = await openReading(gw.baseUrl, { "last-event-id": got.at(-1)! });
          resumedAt ??= published.length;
          await waitUntil(
            "the resumed stream to end or to bring the last event published",
            () => next.ended || (!publishing && (next.ids.at(-1) ?? got.at(-1)) === published.at(-1)),
            { timeoutMs: MAX_AGE_MS + 20_000 },
          );
          next.abort();
          got.push(...next.ids);
        }
        await publisher;
        // every event published after the first stream opened, once, in order
        expect(got).toEqual(published);
      },
      TIMEOUT_MS,
    );
  });
});
