import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { OutboundConnections, outboundRequest, type OutboundRequest } from "./request.js";
import { checkTarget, DEFAULT_ALLOWED_PORTS, type CheckedTarget } from "./ssrf.js";

/**
 * Kept-alive outbound connections (docs/design/notifications.md#attempts), against real loopback
 * servers that count the connections they accept.
 */
describe("outbound requests on kept connections", () => {
  const servers: Server[] = [];
  const pools: OutboundConnections[] = [];
  afterAll(async () => {
    for (const p of pools) p.close();
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

  /** A loopback server answering with `answer`; `sockets` lists every connection it accepted. */
  async function server(answer: (req: IncomingMessage, res: ServerResponse, socket: Socket) => void) {
    const sockets: Socket[] = [];
    const s = createServer((req, res) => {
      req.resume();
      req.on("end", () => answer(req, res, req.socket));
    });
    s.on("connection", (c: Socket) => sockets.push(c));
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}/hook`;
    const target = await checkTarget(url, { allowPrivate: true, allowedPorts: DEFAULT_ALLOWED_PORTS });
    return { target, sockets };
  }
  const pool = (): OutboundConnections => {
    const p = new OutboundConnections();
    pools.push(p);
    return p;
  };
  const post: OutboundRequest = { method: "POST", headers: {}, body: "{}", deadlineMs: 5_000, maxBytes: 1_024 };
  const send = (t: CheckedTarget, c?: OutboundConnections) => outboundRequest(t, post, c);

  it("requests one after another to one target share one connection; without a pool each opens its own", async () => {
    const { target, sockets } = await server((_req, res) => res.writeHead(204).end());
    const kept = pool();
    for (let i = 0; i < 4; i++) expect((await send(target, kept)).kind).toBe("ok");
    expect(sockets).toHaveLength(1);
    for (let i = 0; i < 3; i++) expect((await send(target)).kind).toBe("ok");
    expect(sockets).toHaveLength(4);
  });

  it("a non-2xx answer read to its end keeps the connection; an answer cut at maxBytes closes it", async () => {
    let big = false;
    const { target, sockets } = await server((_req, res) =>
      big ? res.writeHead(200).end("x".repeat(64 * 1024)) : res.writeHead(503).end("busy"),
    );
    const kept = pool();
    expect((await send(target, kept)).kind).toBe("status");
    expect((await send(target, kept)).kind).toBe("status");
    expect(sockets).toHaveLength(1);
    big = true;
    const cut = await send(target, kept);
    expect([cut.kind, cut.truncated, cut.body.length]).toEqual(["ok", true, 1_024]);
    big = false;
    expect((await send(target, kept)).kind).toBe("status");
    // the cut connection was not handed to the next request
    expect(sockets).toHaveLength(2);
    expect(sockets[0]!.destroyed).toBe(true);
  });

  it("a kept connection the server drops as the next request arrives is retried once on a new one", async () => {
    let answered = 0;
    const { target, sockets } = await server((_req, res, socket) => {
      // the second request on the first connection: closed unanswered, as a server whose idle
      // timeout fired just as the request came in
      if (answered === 1 && socket === sockets[0]) {
        socket.destroy();
        answered++;
        return;
      }
      answered++;
      res.writeHead(204).end();
    });
    const kept = pool();
    expect((await send(target, kept)).kind).toBe("ok");
    const again = await send(target, kept);
    expect([again.kind, again.detail]).toEqual(["ok", ""]);
    expect(sockets).toHaveLength(2);
    expect(answered).toBe(3);
  });

  it("keeps at most maxTargets pools, closing the least recently used one's connections", async () => {
    const a = await server((_req, res) => res.writeHead(204).end());
    const b = await server((_req, res) => res.writeHead(204).end());
    const c = await server((_req, res) => res.writeHead(204).end());
    const kept = new OutboundConnections({ maxTargets: 2 });
    pools.push(kept);
    for (const t of [a, b, a, c]) expect((await send(t.target, kept)).kind).toBe("ok");
    expect(kept.size).toBe(2);
    // b was the least recently used when c came: its connection is closed, a's is reused
    await new Promise<void>((r) => (b.sockets[0]!.destroyed ? r() : b.sockets[0]!.once("close", () => r())));
    expect((await send(a.target, kept)).kind).toBe("ok");
    expect([a.sockets.length, b.sockets.length, c.sockets.length]).toEqual([1, 1, 1]);
  });

  it("one host name at two checked addresses gets two pools: a connection serves only the address checked", async () => {
    const { target, sockets } = await server((_req, res) => res.writeHead(204).end());
    const kept = pool();
    // a host name (an IP literal is connected to as written, with no lookup to pin)
    const url = new URL(target.url);
    url.hostname = "localhost";
    const checked: CheckedTarget = { url, address: "127.0.0.1", family: 4 };
    expect((await send(checked, kept)).kind).toBe("ok");
    expect((await send(checked, kept)).kind).toBe("ok");
    // the same name checked at another loopback address, where nothing listens: not the kept connection
    const moved: CheckedTarget = { url, address: "127.0.0.2", family: 4 };
    expect((await send(moved, kept)).kind).toBe("failed");
    expect(kept.size).toBe(2);
    expect(sockets).toHaveLength(1);
  });
});
