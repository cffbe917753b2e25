import type { Server } from "node:http";
import { Server as NetServer, type Socket } from "node:net";

/**
 * The drain of an HTTP server at shutdown (docs/reliability.md "The gateway's drain"), and the
 * connection tracking it needs from the server's start.
 */

/** What {@link trackConnections} knows of a server's open connections. */
export interface TrackedConnections {
  /** Open connections → requests in progress on it and when it last became idle (ms since the epoch). */
  readonly open: ReadonlyMap<Socket, { busy: number; idleSince: number }>;
}

/**
 * Tracks the connections of `server` from now on (call it before the server accepts any): each
 * one's requests in progress and since when it has been idle. {@link drainHttpServer} closes only
 * connections idle for a while, never one between two requests of a busy client.
 */
export function trackConnections(server: Server): TrackedConnections {
  const open = new Map<Socket, { busy: number; idleSince: number }>();
  server.on("connection", (socket: Socket) => {
    open.set(socket, { busy: 0, idleSince: Date.now() });
    socket.once("close", () => open.delete(socket));
  });
  server.on("request", (req, res) => {
    const c = open.get(req.socket);
    if (!c) return;
    c.busy++;
    res.once("close", () => {
      c.busy--;
      c.idleSince = Date.now();
    });
  });
  return { open };
}

/** Timing of {@link drainHttpServer}, in ms. */
export interface DrainTiming {
  /** Until every connection is closed, whatever it is doing (default 10 000: the chart's grace period leaves 10 s after preStop). */
  graceMs?: number;
  /**
   * How long a keep-alive connection must have been idle before the drain closes it (default
   * 5 000). A client using its connection gets its next answer with `Connection: close` and closes
   * the connection itself; one idle this long is a spare connection of its pool.
   */
  idleCloseAfterMs?: number;
}

/**
 * Drains `server` at shutdown so that no keep-alive client gets a reset: new connections are
 * refused at once, and the caller's request handler answers every request from now on with
 * `Connection: close` (the caller sets that), so a client in the middle of a sequence of requests
 * gets its answer and closes the connection itself. A connection is closed by the drain only once
 * it has been idle `idleCloseAfterMs` (looked at every 100 ms), and every connection at `graceMs`.
 * Resolves when no connection is left (or at `graceMs`). `connections`: trackConnections(server),
 * called at the server's start. Never throws.
 *
 * Why not `server.close()` or `closeIdleConnections()` at some moment: they close every
 * connection idle at that instant — also one whose client, between two requests, is sending its
 * next one — and behind a balancer that keeps a client's connection on this pod (kube-proxy, a TCP
 * balancer) that request is reset: the production rehearsal lost 18 requests at once at SIGTERM,
 * then 3 with the idle close at a fixed 1 s (docs/operations/rehearsal.md). A client's pool reuses
 * its most recently used connection first (Node's agent, nginx's upstream keep-alive), so one
 * idle for seconds is the one least likely to be picked at that moment.
 */
export function drainHttpServer(
  server: Server,
  connections: TrackedConnections,
  timing: DrainTiming = {},
): Promise<void> {
  const graceMs = timing.graceMs ?? 10_000;
  const idleCloseAfterMs = Math.min(timing.idleCloseAfterMs ?? 5_000, graceMs);
  return new Promise<void>((resolve) => {
    const sweep = () => {
      const now = Date.now();
      for (const [socket, c] of connections.open)
        if (c.busy === 0 && now - c.idleSince >= idleCloseAfterMs) socket.destroy();
    };
    const sweeper = setInterval(sweep, 100);
    const deadline = setTimeout(() => {
      server.closeAllConnections();
      done();
    }, graceMs);
    function done() {
      clearInterval(sweeper);
      clearTimeout(deadline);
      resolve();
    }
    // net.Server's close: stops accepting and calls back once every connection has ended, without
    // http.Server's closing of the idle ones
    NetServer.prototype.close.call(server, () => done());
    sweep();
  });
}
