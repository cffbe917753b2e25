import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { carriedRate, LoadGenerator } from "./load.js";

/**
 * carriedRate, the rehearsal's rate step (docs/operations/rehearsal.md "The rate"), against a
 * stand-in API (a node:http server, not APS: what is under test is the load's arithmetic) that
 * answers at once while it has seen at most CAPACITY requests in the last second and LATE_MS late
 * beyond: the rate halves from a window that misses until one is carried, and stays at the
 * starting rate when the first window is carried.
 */
const CAPACITY = 15;
const LATE_MS = 400;

describe("carriedRate (the rehearsal's load against a stand-in API of known capacity)", () => {
  let server: Server;
  let baseUrl: string;
  const recent: number[] = [];

  beforeAll(async () => {
    let n = 0;
    server = createServer((req, res) => {
      const now = Date.now();
      recent.push(now);
      while (recent.length > 0 && recent[0]! < now - 1_000) recent.shift();
      const answer = () => {
        res.writeHead(req.method === "POST" && !req.url!.endsWith("/vote") ? 201 : 200, {
          "content-type": "application/json",
        });
        res.end(JSON.stringify({ id: `p_${++n}`, items: [], nextCursor: null }));
      };
      req.resume();
      req.on("end", () => (recent.length > CAPACITY ? setTimeout(answer, LATE_MS) : answer()));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const agents = [
    { agentId: "ag_a", apiKey: "k_a" },
    { agentId: "ag_b", apiKey: "k_b" },
  ];
  const opts = { windowMs: 2_000, slowMs: 200, maxSlowShare: 0.1, minRate: 5, maxWindows: 4, settleMs: 1_500 };

  it("halves the rate after each window with more than a tenth of its requests slow, until one is carried", async () => {
    const load = new LoadGenerator(baseUrl, agents, { rate: 40 });
    load.start();
    try {
      const found = await carriedRate(load, opts);
      expect(found.windows.map((w) => w.rate)).toEqual([40, 20, 10]);
      expect(found.windows[0]!.slow).toBeGreaterThan(0.1 * found.windows[0]!.sent);
      expect(found.windows[2]!.slow).toBeLessThanOrEqual(0.1 * found.windows[2]!.sent);
      expect(found).toMatchObject({ rate: 10, carried: true });
      expect(load.requestsPerSecond).toBe(10);
    } finally {
      await load.stop();
    }
  }, 30_000);

  it("keeps the starting rate when its first window is carried", async () => {
    const load = new LoadGenerator(baseUrl, agents, { rate: 8 });
    load.start();
    try {
      const found = await carriedRate(load, opts);
      expect(found).toMatchObject({ rate: 8, carried: true });
      expect(found.windows).toHaveLength(1);
      expect(found.windows[0]!.sent).toBeGreaterThanOrEqual(14);
    } finally {
      await load.stop();
    }
  }, 30_000);
});
