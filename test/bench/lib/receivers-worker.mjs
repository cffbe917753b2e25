// The webhook receivers of `npm run bench:mix` in their own thread (docs/design/tests.md#mixed-load-bench): the bench
// client's main thread also runs the open-loop load, and a receiver
// answering from that busy event loop adds its delay to every attempt of the delivery worker
// (measured: p50 12–15 ms, p99 135–317 ms), so the bench measured its own client, not APS. Here
// each receiver answers from an event loop that does nothing else; what arrived is sent to the
// main thread in batches (startReceivers in mix-push.mjs).
import http from "node:http";
import { parentPort, workerData } from "node:worker_threads";

/** @type {{ n: number, slow: number, slowMs: number }} */
const o = workerData;
/** Arrivals not yet sent: [receiver index, key or "" (a repeat or not an event), lag ms, occurred epoch ms]. */
let pending = [];
const flush = () => {
  if (pending.length === 0) return;
  parentPort.postMessage({ type: "arrivals", arrivals: pending });
  pending = [];
};
setInterval(flush, 50).unref();

const servers = [];
const urls = [];
for (let i = 0; i < o.n; i++) {
  const slow = i < o.slow;
  const ids = new Set();
  const keys = new Set();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const at = Date.now();
      const id = String(req.headers["webhook-id"] ?? "");
      let arrival = [i, "", 0, 0];
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        if (body.type !== "webhook.ping" && !ids.has(id)) {
          ids.add(id);
          const key = `${body.eventId} ${body.type}`;
          if (!keys.has(key)) {
            keys.add(key);
            const occurred = Date.parse(body.timestamp);
            arrival = [i, key, at - occurred, occurred];
          }
        }
      } catch {
        // not JSON: counted as a delivery, nothing else
      }
      pending.push(arrival);
      const answer = () => {
        res.statusCode = 204;
        res.end();
      };
      if (slow) setTimeout(answer, o.slowMs).unref();
      else answer();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  urls.push(`http://127.0.0.1:${server.address().port}/hook`);
  servers.push(server);
}
parentPort.postMessage({ type: "ready", urls });

parentPort.on("message", async (m) => {
  if (m.type === "sync") {
    flush();
    parentPort.postMessage({ type: "synced", id: m.id });
  } else if (m.type === "close") {
    flush();
    for (const s of servers) {
      s.closeAllConnections?.();
      await new Promise((resolve) => s.close(() => resolve()));
    }
    parentPort.postMessage({ type: "closed" });
  }
});
