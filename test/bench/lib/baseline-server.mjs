#!/usr/bin/env node
// A baseline server for the read benchmarks, run as its own process by baselines.mjs:
//   node baseline-server.mjs bare|express <responses.json>
// It answers each recorded path (exact URL with query) with the recorded body, byte for byte, and
// the recorded content-type; anything else is 404. `bare` is node:http with nothing on top;
// `express` is a minimal express 5 app with its defaults (ETag, x-powered-by) and the two routes
// the gateway has for these paths. Prints "listening <port>" on 127.0.0.1 (port 0 = OS picks).
import http from "node:http";
import { readFileSync } from "node:fs";

const [kind, file] = process.argv.slice(2);
/** @type {Map<string, { contentType: string, body: Buffer }>} */
const responses = new Map(
  JSON.parse(readFileSync(file, "utf8")).map((r) => [
    r.path,
    { contentType: r.contentType, body: Buffer.from(r.body, "base64") },
  ]),
);

let server;
if (kind === "bare") {
  server = http.createServer((req, res) => {
    const r = responses.get(req.url);
    if (!r) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": r.contentType, "content-length": r.body.length });
    res.end(r.body);
  });
} else if (kind === "express") {
  const { default: express } = await import("express");
  const app = express();
  const answer = (req, res) => {
    const r = responses.get(req.originalUrl);
    if (!r) {
      res.sendStatus(404);
      return;
    }
    res.set("content-type", r.contentType).send(r.body);
  };
  app.get("/v1/posts", answer);
  app.get("/v1/posts/:id", answer);
  server = http.createServer(app);
} else {
  console.error("usage: baseline-server.mjs bare|express <responses.json>");
  process.exit(2);
}
server.listen(0, "127.0.0.1", () => console.log(`listening ${server.address().port}`));
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
