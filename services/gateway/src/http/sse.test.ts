import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Response } from "express";
import { ApsError } from "@aps/platform";
import { scaled, waitUntil } from "@aps/testkit";
import { SseStreams, type SseStream } from "./sse.js";

/** A server whose every request becomes a stream of `streams`; `opened` resolves each one. */
async function serve(streams: SseStreams) {
  const opened: SseStream[] = [];
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.flushHeaders();
    opened.push(streams.open(res as unknown as Response, streams.admit("s")));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  /**
   * A client that reads (`read: true`) or never does: without a `data` listener its response is
   * never flowing, so once its buffer is full the socket stops reading and the kernel's buffers fill.
   */
  const client = (read: boolean) =>
    new Promise<{ res: IncomingMessage; text: () => string }>((resolve) => {
      let text = "";
      request({ port, host: "127.0.0.1" }, (res) => {
        if (read) res.on("data", (c: Buffer) => (text += c.toString()));
        resolve({ res, text: () => text });
      }).end();
    });
  return { opened, client, close: () => (server.closeAllConnections(), new Promise((r) => server.close(r))) };
}

/** The bounded event streams (docs/design/events.md#event-stream-sse). */
describe("SseStreams", () => {
  it("admits at most perSource per source (429) and perReplica in all (503), both with Retry-After", () => {
    const streams = new SseStreams({ perSource: 2, perReplica: 3 });
    const a1 = streams.admit("a");
    streams.admit("a");
    const refused = (source: string) => {
      try {
        streams.admit(source);
      } catch (e) {
        return [(e as ApsError).code, (e as ApsError).retryAfterSeconds! > 0];
      }
      return "admitted";
    };
    expect(refused("a")).toEqual(["rate_limited", true]);
    streams.admit("b");
    expect(refused("c")).toEqual(["upstream_unavailable", true]);
    a1.release();
    a1.release(); // idempotent
    expect(refused("a")).toBe("admitted");
  });

  it("admits at most perAgent per agent, within its source's: a neighbour of the same source still gets one (docs/design/events.md#event-stream-sse)", () => {
    const streams = new SseStreams({ perSource: 4, perAgent: 2, perReplica: 100 });
    const refused = (source: string, agent?: string) => {
      try {
        streams.admit(source, agent);
      } catch (e) {
        return [(e as ApsError).code, (e as ApsError).message.includes("EVENT_STREAMS_PER_AGENT")];
      }
      return "admitted";
    };
    const first = streams.admit("nat", "ext_greedy");
    expect(refused("nat", "ext_greedy")).toBe("admitted");
    expect(refused("nat", "ext_greedy")).toEqual(["rate_limited", true]);
    expect(refused("nat", "ext_neighbour")).toBe("admitted"); // the source still has room
    expect(refused("nat")).toBe("admitted"); // and anonymous requests count by source only
    expect(refused("nat", "ext_third")).toEqual(["rate_limited", false]); // the source's bound
    first.release();
    expect(refused("elsewhere", "ext_greedy")).toBe("admitted"); // its place came back
  });

  it("waits for drain and drops a client whose unsent bytes pass maxBufferBytes; a reading client gets everything", async () => {
    const streams = new SseStreams({ maxBufferBytes: 256 * 1024 });
    const s = await serve(streams);
    try {
      const slow = await s.client(false);
      const fast = await s.client(true);
      const [toSlow, toFast] = s.opened;
      const frame = { frame: `data: ${"x".repeat(1_000)}\n\n`, bytes: 1_008 };
      let sent = 0;
      // 64 MiB offered to the slow one in batches: it is dropped long before, once the kernel's buffers are full
      for (let i = 0; i < 64 * 1024 && toSlow!.open; i++) {
        toSlow!.send([frame]);
        sent += frame.bytes;
        if (i % 256 === 0) await new Promise((r) => setImmediate(r));
      }
      expect(toSlow!.open).toBe(false);
      expect(sent).toBeLessThan(32 * 1024 * 1024);
      for (let i = 0; i < 1_000; i++) {
        toFast!.send([frame]);
        await toFast!.writable();
      }
      await waitUntil("the reading client to have every frame", () => fast.text().length >= 1_000 * frame.bytes, {
        timeoutMs: 10_000,
        intervalMs: 10,
      });
      expect(toFast!.open).toBe(true);
      expect(streams.size).toBe(1);
      slow.res.destroy();
      fast.res.destroy();
    } finally {
      await s.close();
    }
  });

  it("ends a stream cleanly at its max age (90–100 % of maxAgeMs) and frees its place", async () => {
    const streams = new SseStreams({ maxAgeMs: 300, perSource: 1 });
    const s = await serve(streams);
    try {
      // taken before the request: the stream opens after it, so its age is at most what is measured
      const t0 = Date.now();
      const c = await s.client(true);
      const ended = new Promise<number>((r) => c.res.on("end", () => r(Date.now() - t0)));
      s.opened[0]!.send("data: hello\n\n");
      const age = await ended;
      expect(age).toBeGreaterThanOrEqual(250);
      // ended by its age timer, not much later (a bound on a late timer, stretched on a loaded machine)
      expect(age).toBeLessThan(scaled(1_500));
      expect(c.text()).toBe("data: hello\n\n");
      expect(streams.size).toBe(0);
      expect(() => streams.admit("s").release()).not.toThrow();
    } finally {
      await s.close();
    }
  });
});
