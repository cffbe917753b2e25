// The idle SSE streams of `npm run bench:mix` in their own thread (docs/design/tests.md#mixed-load-bench):
// every public event reaches every stream at once, and 2,000 of them read on the bench client's
// main thread stalled the event loop that times the load's requests (measured at 90 requests/s,
// no webhooks: p99 49 ms with 200 streams, 100 ms with 2,000), so the bench measured its own
// client. Here the streams are read (and dropped) on an event loop that does nothing else; how
// many opened is sent to the main thread as it changes (openStreams in mix.mjs).
import { parentPort, workerData } from "node:worker_threads";

/** @type {{ n: number, origins: string[], keys: string[] }} */
const o = workerData;
// a signal per stream: undici caps a signal's listeners at 1,500 and warns for every stream past it
const controllers = [];
let open = 0;
for (let i = 0; i < o.n; i++) {
  const url = `${o.origins[i % o.origins.length]}/v1/events/stream`;
  const ctl = new AbortController();
  controllers.push(ctl);
  fetch(url, { headers: { authorization: `Bearer ${o.keys[i % o.keys.length]}` }, signal: ctl.signal })
    .then(async (res) => {
      if (res.ok) parentPort.postMessage({ type: "open", open: ++open });
      for await (const _ of res.body) void _; // read (and drop) events until closed
    })
    .catch(() => undefined);
}
parentPort.on("message", (m) => {
  if (m === "close") {
    for (const ctl of controllers) ctl.abort();
    parentPort.close();
  }
});
