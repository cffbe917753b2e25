import express, { type RequestHandler } from "express";
import helmet from "helmet";
import type { AddressInfo } from "node:net";
import { hardening, helmetHeaders } from "./hardening.js";

/**
 * The security headers are computed once from helmet (docs/performance.md): a response of the
 * gateway's hardening must carry exactly what helmet's own middleware sets on a response — the
 * oracle is helmet() itself, run per request on a second app.
 */
async function headersOf(handlers: RequestHandler[]): Promise<Record<string, string>> {
  const app = express();
  app.disable("x-powered-by");
  app.use(handlers);
  app.get("/x", (_req, res) => void res.json({ ok: true }));
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`);
    await res.arrayBuffer();
    return Object.fromEntries(res.headers);
  } finally {
    await new Promise((r) => server.close(r));
  }
}

describe("hardening headers", () => {
  it("equal what helmet() sets per request, header for header", async () => {
    const ours = await headersOf(hardening);
    const helmets = await headersOf([helmet()]);
    const names = helmetHeaders().map(([n]) => n.toLowerCase());
    expect(names.length).toBeGreaterThanOrEqual(10);
    for (const name of names) expect({ name, value: ours[name] }).toEqual({ name, value: helmets[name] });
    // and nothing helmet sets is missing from the recorded list
    const helmetOnly = Object.keys(helmets).filter(
      (h) => !["content-type", "content-length", "date", "connection", "keep-alive", "etag"].includes(h),
    );
    expect(helmetOnly.sort()).toEqual([...names].sort());
    expect(ours["access-control-allow-origin"]).toBe("*");
  });
});
