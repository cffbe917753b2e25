import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import type { Pod } from "./pod.js";
import { probeTiming, runProbe, type Probe } from "./probes.js";

/**
 * What sends clients to the gateway pods here, as an Ingress behind a Service does in a cluster:
 * {@link Endpoints} keeps the ready pods of a Service (each pod's readiness probe run every
 * periodSeconds; failureThreshold failures in a row take it out, one success puts it back; a
 * terminating pod leaves at once, as the endpoints controller drops it when deletion starts), and
 * {@link TcpBalancer} spreads new TCP connections round-robin over them.
 */

type Entry = { pod: Pod; ready: boolean; failures: number; timer: NodeJS.Timeout; busy: boolean };

/** The ready endpoints of one Service (its pods that pass their readiness probe). */
export class Endpoints {
  private readonly entries = new Map<string, Entry>();
  /** Transitions seen, for the summary: `+pod` ready, `-pod` out (`probe` or `terminating`). */
  readonly events: string[] = [];

  /** Watches `pod`'s readiness probe from now on; it serves once its probe first succeeds. */
  add(pod: Pod): void {
    const probe = pod.container.readinessProbe as Probe | undefined;
    if (!probe) throw new Error(`pod ${pod.name} has no readiness probe to be an endpoint by`);
    const { periodMs, failureThreshold } = probeTiming(probe);
    const entry: Entry = {
      pod,
      ready: false,
      failures: 0,
      busy: false,
      timer: setInterval(() => void this.look(entry, probe, failureThreshold), periodMs),
    };
    this.entries.set(pod.name, entry);
    void this.look(entry, probe, failureThreshold);
  }

  private async look(e: Entry, probe: Probe, failureThreshold: number): Promise<void> {
    if (e.busy || !this.entries.has(e.pod.name)) return;
    e.busy = true;
    const ok = await runProbe(probe, e.pod).finally(() => (e.busy = false));
    if (!this.entries.has(e.pod.name)) return;
    if (ok) {
      e.failures = 0;
      if (!e.ready) this.events.push(`+${e.pod.name}`);
      e.ready = true;
    } else if (++e.failures >= failureThreshold && e.ready) {
      e.ready = false;
      this.events.push(`-${e.pod.name} (probe)`);
    }
  }

  /** Takes `pod` out at once and stops watching it (its deletion started). */
  terminate(pod: Pod): void {
    const e = this.entries.get(pod.name);
    if (!e) return;
    clearInterval(e.timer);
    this.entries.delete(pod.name);
    this.events.push(`-${pod.name} (terminating)`);
  }

  /** Whether `pod` is a ready endpoint now. */
  isReady(pod: Pod): boolean {
    return this.entries.get(pod.name)?.ready === true;
  }

  /** The ready pods, in the order they were added. */
  ready(): Pod[] {
    return [...this.entries.values()].filter((e) => e.ready).map((e) => e.pod);
  }

  /** Stops every probe timer. */
  close(): void {
    for (const e of this.entries.values()) clearInterval(e.timer);
    this.entries.clear();
  }
}

/**
 * A TCP load balancer on 127.0.0.1 over the ready endpoints' `port`: each new connection goes to
 * the next ready pod (round-robin) and stays with it; with no ready pod the connection is closed
 * (the client sees the failure — nothing is retried here). `connections` counts them per pod.
 */
export class TcpBalancer {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private turn = 0;
  readonly connections = new Map<string, number>();
  /** Connections refused because no endpoint was ready. */
  refused = 0;
  constructor(
    private readonly endpoints: Endpoints,
    private readonly port: number,
  ) {}

  /** Listens on a free loopback port; resolves with it. */
  async listen(): Promise<number> {
    const server = createServer((client) => {
      const ready = this.endpoints.ready();
      if (ready.length === 0) {
        this.refused++;
        client.destroy();
        return;
      }
      const pod = ready[this.turn++ % ready.length]!;
      this.connections.set(pod.name, (this.connections.get(pod.name) ?? 0) + 1);
      const upstream = connect(this.port, pod.ip);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
      }
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return (server.address() as AddressInfo).port;
  }

  /** Closes the listener and every connection. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
