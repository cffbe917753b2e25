import { createServer, type Server, type Socket } from "node:net";

/**
 * Listen ports held from a process's start until its gRPC server binds them
 * (docs/design/services.md#port-reservation): keyed by port number.
 */
const held = new Map<number, Server>();

/** `host` and `port` of a listen address `host:port` (`0.0.0.0:50052`, `[::]:50052`); undefined when it names no fixed port. */
function parseListenAddr(addr: string): { host: string; port: number } | undefined {
  const colon = addr.lastIndexOf(":");
  if (colon < 0) return undefined;
  const port = Number(addr.slice(colon + 1));
  if (!Number.isInteger(port) || port <= 0 || port > 65_535) return undefined;
  const host = addr.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
  return { host: host === "" ? "0.0.0.0" : host, port };
}

/**
 * Holds the port of `addr` (`host:port`) with a plain TCP listener until `releaseListenPort` —
 * so that no outbound connection the process makes meanwhile (PostgreSQL, NATS, peers) is given
 * that port as its local port by the kernel. The services' ports (50051–50056) lie inside Linux's
 * ephemeral range (32768–60999); a client socket that got one made the gRPC bind fail with
 * EADDRINUSE ("No address added out of total 1 resolved") — docs/design/services.md#port-reservation. Connections that reach
 * the placeholder are closed at once: a client sees a reset and retries, as it would a refusal.
 * A port of 0 (any) or an address without a port is not held. Holding the same port twice is a
 * no-op. Rejects with the listen error (EADDRINUSE: another process has the port; EADDRNOTAVAIL).
 */
export async function reserveListenPort(addr: string): Promise<void> {
  const parsed = parseListenAddr(addr);
  if (!parsed || held.has(parsed.port)) return;
  const server = createServer((socket: Socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: parsed.host, port: parsed.port, exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  held.set(parsed.port, server);
}

/**
 * Lets go of the port of `addr` held by `reserveListenPort`, resolved once the placeholder is
 * closed (the gRPC server binds it right after). A port not held: resolves at once.
 */
export async function releaseListenPort(addr: string): Promise<void> {
  const parsed = parseListenAddr(addr);
  const server = parsed ? held.get(parsed.port) : undefined;
  if (!parsed || !server) return;
  held.delete(parsed.port);
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** The ports held now (for tests and diagnostics). */
export function heldListenPorts(): number[] {
  return [...held.keys()];
}
