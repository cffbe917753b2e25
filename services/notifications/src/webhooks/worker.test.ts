import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ANSWER_MAX_BYTES, publicError, sendAttempt } from "./worker.js";
import { checkTarget, DEFAULT_ALLOWED_PORTS } from "@aps/platform";

/**
 * One webhook attempt (issue 30 rules 7 and 12, docs/adr/0159): a hard deadline over the whole
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
  /** A loopback receiver answering with `answer`; resolves its URL and the bytes it managed to write. */
  async function target(answer: (res: ServerResponse) => void) {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => answer(res));
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  }
  const attempt = async (url: string, deadlineMs = 800, signal = new AbortController().signal) =>
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
    expect(Date.now() - t0).toBeLessThan(1_500);
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
    const a = await attempt(endless, 5_000);
    expect([a.kind, a.statusCode]).toEqual(["ok", 200]);
    expect(a.ms).toBeLessThan(2_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(closed).toBe(true);
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
    const hang = await target(() => undefined);
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 100);
    const a = await attempt(hang, 5_000, ctl.signal);
    expect([a.kind, publicError(a)]).toEqual(["aborted", ""]);
    expect(a.ms).toBeLessThan(1_000);
  });
});
