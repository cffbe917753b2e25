import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";

/**
 * A TCP proxy on a fixed loopback port to `target` (e.g. one service's way to NATS), which a test
 * cuts and restores: `down()` destroys every connection and refuses new ones, `up()` listens again
 * on the same port and forwards — optionally holding every client→target chunk back by a fixed
 * latency (in order), so a test can make a write reach the server measurably later than the
 * client believes.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  /** The proxy's port (fixed after the first `up()`). */
  port = 0;
  constructor(private readonly target: { host: string; port: number }) {}

  /**
   * Listens (again, on the same port) and forwards every new connection to the target.
   * `upstreamLatencyMs` (default 0): each chunk from a client is written to the target that many
   * ms after it arrived; chunks keep their order (timers of one duration fire in the order set).
   */
  async up(opts: { upstreamLatencyMs?: number } = {}): Promise<void> {
    const latency = opts.upstreamLatencyMs ?? 0;
    const server = createServer((s) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
      s.on("error", () => undefined);
      const up = connect(this.target.port, this.target.host);
      this.sockets.add(up);
      up.on("close", () => this.sockets.delete(up));
      up.on("error", () => s.destroy());
      if (latency > 0) {
        s.on("data", (chunk: Buffer) => {
          setTimeout(() => {
            if (!up.destroyed) up.write(chunk);
          }, latency);
        });
        up.pipe(s);
      } else s.pipe(up).pipe(s);
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as AddressInfo).port;
  }

  /** Cuts every connection and stops listening: new connections are refused. */
  async down(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
    this.server = undefined;
  }
}
