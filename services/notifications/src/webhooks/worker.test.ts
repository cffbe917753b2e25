import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ANSWER_MAX_BYTES, publicError, sendAttempt } from "./worker.js";
import { checkTarget, DEFAULT_ALLOWED_PORTS } from "@aps/platform";
import { scaled, waitUntil } from "@aps/testkit";

/**
 * One webhook attempt (docs/design/notifications.md#attempts): a hard deadline over the whole
 * exchange however slowly the target trickles, at most ANSWER_MAX_BYTES of answer read, and a
 * `lastError` that says no more than the status, `timeout` or `connection failed`.
 */
describe("a webhook attempt", () => {
  const servers: Server[] = [];
  afterAll(async () => {
    await Promise.all(
      servers.map(
        (s) =>
          new Promise<void>((r) => {
            s.closeAllConnections();
            s.close(() => r());
          }),
      ),
    );
  });
  /** A loopback receiver answering with `answer` once it has the request; resolves its URL. */
  async function target(answer: (res: ServerResponse) => void) {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => answer(res));
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  }
  // the default deadline is for answers that come at once: stretched on a loaded machine
  const attempt = async (url: string, deadlineMs = scaled(800), signal = new AbortController().signal) =>
    sendAttempt(
      await checkTarget(url, { allowPrivate: true, allowedPorts: DEFAULT_ALLOWED_PORTS }),
      '{"type":"t","timestamp":"x","data":{}}',
      { "webhook-id": "msg_1", "webhook-timestamp": "1", "webhook-signature": "v1,x" },
      deadlineMs,
      signal,
    );

  it("a 2xx read to its end is ok; another status is `HTTP <status>`", async () => {
    const ok = await attempt(await target((res) => res.writeHead(204).end()));
    expect([ok.kind, ok.statusCode, publicError(ok)]).toEqual(["ok", 204, ""]);
    const bad = await attempt(await target((res) => res.writeHead(503).end("busy")));
    expect([bad.kind, bad.statusCode, publicError(bad)]).toEqual(["status", 503, "HTTP 503"]);
  });

  it("a target dripping one byte at a time is cut at the deadline, status or not", async () => {
    const drip = await target((res) => {
      res.writeHead(200);
      res.flushHeaders();
      const t = setInterval(() => res.write("."), 100);
      res.on("close", () => clearInterval(t));
    });
    const t0 = Date.now();
    const a = await attempt(drip, 600);
    // cut at its deadline, not at the end of a trickle that never ends (a bound on a late timer, stretched)
    expect(Date.now() - t0).toBeLessThan(scaled(1_500));
    expect([a.kind, publicError(a)]).toEqual(["timeout", "timeout"]);
    // headers never complete: the socket gets one byte of a header line every 100 ms
    const silent = await target((res) => {
      res.socket?.write("HTTP/1.1 200 OK\r\nX-Slow: ");
      const t = setInterval(() => res.socket?.write("a"), 100);
      res.on("close", () => clearInterval(t));
    });
    const s = await attempt(silent, 600);
    expect([s.kind, s.statusCode, publicError(s)]).toEqual(["timeout", 0, "timeout"]);
  });

  it(`an endless answer is read to ${ANSWER_MAX_BYTES} bytes, then the connection is closed`, async () => {
    let written = 0;
    let closed = false;
    const endless = await target((res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(1024, 120);
      res.on("close", () => (closed = true));
      const pump = () => {
        while (!closed && written < 64 * 1024 * 1024 && res.write(chunk)) written += chunk.length;
        if (!closed) res.once("drain", pump);
      };
      pump();
    });
    const deadlineMs = scaled(5_000);
    const a = await attempt(endless, deadlineMs);
    // ended by the byte cap, well before its deadline
    expect([a.kind, a.statusCode]).toEqual(["ok", 200]);
    expect(a.ms).toBeLessThan(deadlineMs * 0.4);
    await waitUntil("the target to see its connection closed", () => closed, { timeoutMs: 10_000, intervalMs: 10 });
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });

  it("a refused connection says `connection failed`, never the address or the socket's message", async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((r) => server.close(() => r()));
    const a = await attempt(`http://127.0.0.1:${port}/hook`);
    expect(a.kind).toBe("failed");
    expect(a.detail).toMatch(/ECONNREFUSED/); // for the service's log
    expect(publicError(a)).toBe("connection failed");
  });

  it("stopping the worker aborts the attempt in flight", async () => {
    let arrived!: () => void;
    const inFlight = new Promise<void>((r) => (arrived = r));
    // a target that has the request and never answers
    const hang = await target(() => arrived());
    const ctl = new AbortController();
    const deadlineMs = scaled(5_000);
    const pending = attempt(hang, deadlineMs, ctl.signal);
    await inFlight;
    const t0 = Date.now();
    ctl.abort();
    const a = await pending;
    expect([a.kind, publicError(a)]).toEqual(["aborted", ""]);
    // ended by the abort, long before its deadline
    expect(Date.now() - t0).toBeLessThan(deadlineMs * 0.2);
  });
});
