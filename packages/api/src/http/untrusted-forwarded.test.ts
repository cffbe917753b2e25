import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import express from "express";
import { createLogger, forwardedUntrusted } from "@aps/platform";
import { peerRange, untrustedForwarded, WARN_EVERY_MS } from "./untrusted-forwarded.js";

/**
 * X-Forwarded-For from a peer that is not a trusted proxy (docs/reliability.md "Abuse"): counted by
 * the peer's range and warned about once per peer per 10 minutes, naming TRUSTED_PROXIES; silent for
 * a trusted proxy and for a request without the header.
 */
async function serve(trustProxy: string[] | false) {
  const warnings: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString("utf8").split("\n").filter(Boolean))
        warnings.push((JSON.parse(l) as { msg: string }).msg);
      done();
    },
  });
  let t = 1_000_000;
  const clock = { advance: (ms: number) => void (t += ms) };
  const app = express();
  app.set("trust proxy", trustProxy);
  app.use(untrustedForwarded(createLogger("gateway", "warn", sink), () => t));
  app.get("/x", (req, res) => void res.json({ ip: req.ip }));
  const server = app.listen(0, "127.0.0.1");
  await once(server, "listening");
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const get = async (xff?: string) =>
    ((await (await fetch(`${base}/x`, { headers: xff ? { "x-forwarded-for": xff } : {} })).json()) as { ip: string })
      .ip;
  return { get, warnings, clock, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const loopbackCount = async () =>
  (await forwardedUntrusted.get()).values.find((v) => v.labels.peer === "loopback")?.value ?? 0;

describe("X-Forwarded-For from an untrusted peer", () => {
  it("is ignored as before, counted each time, and warned about once per peer per 10 minutes", async () => {
    const s = await serve(false);
    try {
      const before = await loopbackCount();
      expect(await s.get("203.0.113.7")).toBe("127.0.0.1");
      expect(await s.get("203.0.113.8")).toBe("127.0.0.1");
      expect(await loopbackCount()).toBe(before + 2);
      expect(s.warnings).toHaveLength(1);
      expect(s.warnings[0]).toMatch(/TRUSTED_PROXIES=loopback/);
      s.clock.advance(WARN_EVERY_MS);
      await s.get("203.0.113.9");
      expect(s.warnings).toHaveLength(2);
      // no header: nothing to notice
      await s.get();
      expect([await loopbackCount(), s.warnings.length]).toEqual([before + 3, 2]);
    } finally {
      await s.close();
    }
  });

  it("is silent for a trusted proxy, whose header names the client", async () => {
    const s = await serve(["loopback"]);
    try {
      const before = await loopbackCount();
      expect(await s.get("203.0.113.7")).toBe("203.0.113.7");
      expect([await loopbackCount(), s.warnings]).toEqual([before, []]);
    } finally {
      await s.close();
    }
  });

  it("names the peer's range", () => {
    expect(
      ["127.0.0.1", "::1", "::ffff:127.0.0.1", "10.1.2.3", "fd00::1", "203.0.113.7", "2001:db8::1", "junk"].map(
        peerRange,
      ),
    ).toEqual(["loopback", "loopback", "loopback", "private", "private", "public", "public", "public"]);
  });
});
