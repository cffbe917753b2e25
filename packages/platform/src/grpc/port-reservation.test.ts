import { execFileSync, spawnSync } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { waitUntil } from "@aps/testkit";
import { createLogger } from "../log.js";
import { startGrpcServer, type RunningGrpcServer } from "./server.js";
import { HealthClient } from "./health.js";
import { heldListenPorts, releaseListenPort, reserveListenPort } from "./port-reservation.js";

/**
 * A service's gRPC port held from its start until it binds (docs/design/services.md#port-reservation). The landing CI of
 * ef8dee2 saw the forum container exit with grpc-js's "No address added out of total 1 resolved":
 * 50052 lies in Linux's ephemeral range, and an outbound socket the process opened first can be
 * given it as its local port.
 */
const log = createLogger("port-reservation-test", "silent");

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** A plain listener on loopback to connect to; resolves its port. */
async function peer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const s = net.createServer((c) => sockets.add(c));
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  return {
    port: (s.address() as net.AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        for (const c of sockets) c.destroy();
        s.close(() => resolve());
      }),
  };
}

/** Connects to `to` from local port `localPort`; resolves the socket or rejects with the error (EADDRINUSE). */
async function connectFrom(localPort: number, to: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const c = net.connect({ host: "127.0.0.1", port: to, localAddress: "127.0.0.1", localPort });
    c.once("connect", () => resolve(c));
    c.once("error", reject);
  });
}

async function serving(port: number): Promise<string> {
  const health = new HealthClient(`127.0.0.1:${port}`);
  try {
    return await health.check(2_000);
  } finally {
    health.close();
  }
}

/**
 * The child of the namespace test: in a network namespace whose ephemeral range is the one port
 * 50052, it (optionally holds 50052,) connects out to a listener of its own, then starts a gRPC
 * server on 0.0.0.0:50052 with the platform's built code; prints `{ client, bind }` as JSON.
 */
const CHILD = `
import net from "node:net";
const { reserveListenPort, startGrpcServer, createLogger } = await import(process.env.PLATFORM);
if (process.argv[1] === "reserve") await reserveListenPort("0.0.0.0:50052");
const peer = net.createServer(() => undefined).listen(9999, "127.0.0.1");
await new Promise((r) => peer.once("listening", r));
const client = await new Promise((r) => {
  const c = net.connect(9999, "127.0.0.1");
  c.once("connect", () => r("local port " + c.localPort));
  c.once("error", (e) => r(e.code));
});
const bind = await startGrpcServer("0.0.0.0:50052", [], createLogger("ns", "silent")).then(
  () => "bound",
  (e) => e.message,
);
console.log(JSON.stringify({ client, bind }));
process.exit(0);
`;

/** Why the namespace test cannot run here, or undefined: it needs root and util-linux's unshare. */
function namespaceUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return "not root (unshare -n needs it)";
  try {
    execFileSync("unshare", ["-n", "true"], { stdio: "ignore" });
  } catch {
    return "unshare -n failed (util-linux missing or no CAP_SYS_ADMIN)";
  }
  return undefined;
}
const unavailable = namespaceUnavailable();
const platformDist = fileURLToPath(new URL("../../dist/index.js", import.meta.url));

/** Runs CHILD in a fresh network namespace (loopback up, ephemeral range 50052–50052). */
function inNamespace(reserve: boolean): { client: string; bind: string } {
  const script = `ip link set lo up && sysctl -qw net.ipv4.ip_local_port_range="50052 50052" && exec node --input-type=module -e "$CHILD" ${reserve ? "reserve" : "plain"}`;
  const r = spawnSync("unshare", ["-n", "sh", "-c", script], {
    env: { ...process.env, CHILD, PLATFORM: platformDist },
    encoding: "utf8",
    timeout: 30_000,
  });
  const line = r.stdout.trim().split("\n").pop() ?? "";
  if (!line.startsWith("{")) throw new Error(`the namespace child printed no result: ${r.stdout} ${r.stderr}`);
  return JSON.parse(line) as { client: string; bind: string };
}

(unavailable ? describe.skip : describe)(
  `the cause, in a network namespace whose ephemeral range is the service's port${unavailable ? ` — SKIPPED: ${unavailable}` : ""}`,
  () => {
    it("an outbound connection made first takes 50052 and the gRPC bind fails; held first, the bind succeeds", () => {
      const plain = inNamespace(false);
      expect(plain.client).toBe("local port 50052");
      expect(plain.bind).toMatch(/No address added.*EADDRINUSE/);
      const held = inNamespace(true);
      expect(held.client).toBe("EADDRNOTAVAIL");
      expect(held.bind).toBe("bound");
    });
  },
);

describe("a gRPC listen port held from the process's start (docs/design/services.md#port-reservation)", () => {
  let server: RunningGrpcServer | undefined;
  afterEach(async () => {
    await server?.shutdown(1_000);
    server = undefined;
  });

  it("while held, no outbound socket can take the port; the gRPC server then binds it and serves", async () => {
    const port = await freePort();
    await reserveListenPort(`127.0.0.1:${port}`);
    expect(heldListenPorts()).toContain(port);
    const target = await peer();
    try {
      await expect(connectFrom(port, target.port)).rejects.toMatchObject({ code: "EADDRINUSE" });
    } finally {
      await target.close();
    }
    server = await startGrpcServer(`127.0.0.1:${port}`, [], log);
    expect(server.port).toBe(port);
    expect(heldListenPorts()).not.toContain(port);
    await expect(serving(port)).resolves.toBe("SERVING");
  });

  it("a connection to the placeholder is closed at once (the client retries, as after a refusal)", async () => {
    const port = await freePort();
    await reserveListenPort(`127.0.0.1:${port}`);
    try {
      let closed = false;
      const c = net.connect({ host: "127.0.0.1", port });
      c.on("error", () => undefined);
      c.once("close", () => (closed = true));
      try {
        // at once: a placeholder that kept the connection open would leave it open past this deadline
        await waitUntil("the placeholder to close the connection", () => closed, { timeoutMs: 2_000, intervalMs: 10 });
      } finally {
        c.destroy();
      }
      expect(closed).toBe(true);
    } finally {
      await releaseListenPort(`127.0.0.1:${port}`);
    }
    expect(heldListenPorts()).not.toContain(port);
  });

  it("holds nothing for port 0 or an address without a port; rejects when another process has the port", async () => {
    await reserveListenPort("127.0.0.1:0");
    await reserveListenPort("not-an-address");
    expect(heldListenPorts()).toEqual([]);
    const other = await peer();
    try {
      await expect(reserveListenPort(`127.0.0.1:${other.port}`)).rejects.toMatchObject({ code: "EADDRINUSE" });
      expect(heldListenPorts()).toEqual([]);
    } finally {
      await other.close();
    }
  });
});
