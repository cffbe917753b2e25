import { Server as NetServer } from "node:net";
import type { Server } from "node:http";

/** Timing of {@link drainHttpServer}, in ms. */
export interface DrainTiming {
  /** Until every connection is closed, whatever it is doing (default 10 000: the chart's grace period leaves 10 s after preStop). */
  graceMs?: number;
  /**
   * How long a keep-alive connection may stay idle before it is closed (default 1 000). A client
   * using its connection gets its next answer with `Connection: close` well within it and closes
   * the connection itself; what is still idle then is a client's spare connection.
   */
  idleCloseAfterMs?: number;
}

/**
 * Drains `server` at shutdown (docs/reliability.md "Rollouts") so that no keep-alive client gets
 * a reset: new connections are refused at once, and the caller's request handler answers every
 * request from now on with `Connection: close` (the caller sets that; see the gateway's server),
 * so a client in the middle of a sequence of requests gets its answer and closes the connection
 * itself. Connections still idle after `idleCloseAfterMs` are closed, and every connection at
 * `graceMs`. Resolves when no connection is left (or at `graceMs`).
 *
 * Why not `server.close()` alone: since Node 19 it closes every idle keep-alive connection at
 * once, and an idle connection is also one whose client is sending its next request at that
 * moment — behind a balancer that keeps a client's connection on this pod (kube-proxy, a TCP
 * balancer), that request is reset (the production rehearsal lost 18 requests this way within
 * 1.5 s of a gateway's SIGTERM). Never throws.
 */
export function drainHttpServer(server: Server, timing: DrainTiming = {}): Promise<void> {
  const graceMs = timing.graceMs ?? 10_000;
  const idleCloseAfterMs = Math.min(timing.idleCloseAfterMs ?? 1_000, graceMs);
  return new Promise<void>((resolve) => {
    const idle = setTimeout(() => server.closeIdleConnections(), idleCloseAfterMs);
    const deadline = setTimeout(() => {
      server.closeAllConnections();
      done();
    }, graceMs);
    function done() {
      clearTimeout(idle);
      clearTimeout(deadline);
      resolve();
    }
    // net.Server's close: stops accepting and calls back once every connection has ended, without
    // http.Server's closing of the idle ones
    NetServer.prototype.close.call(server, () => done());
  });
}
