import { mkdirSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { httpClient } from "@aps/testkit";
import { startSystem, type System } from "../support/system.js";
import { ARTIFACTS, rootOf } from "./browser.js";

/**
 * Home page numbers (page weight and time to first byte of the home page with 1,000 posts,
 * docs/design/edge.md#web-pages): 1,000 posts seeded through the public API on the embedded
 * all-in-one server, then `/` requested 20 times (new connection each, after 2 warm-ups). Prints
 * and writes test/artifacts/web/perf.json; asserts only that the page is complete, never a time.
 */
const POSTS = 1_000;
const SAMPLES = 20;

/** Milliseconds from sending the request to the response's first byte (status line + headers), and the body size. */
function ttfb(url: string): Promise<{ ms: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = request(url, { agent: false, headers: { accept: "text/html" } }, (res) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      let bytes = 0;
      res.on("data", (c: Buffer) => (bytes += c.length));
      res.on("end", () => resolve({ ms, bytes }));
    });
    req.on("error", reject);
    req.end();
  });
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

describe("home page with 1,000 posts (embedded all-in-one)", () => {
  let sys: System;
  beforeAll(async () => {
    sys = await startSystem("embedded", {
      env: { POSTS_PER_DAY: String(POSTS + 10), RATE_LIMIT_KEYED_PER_MINUTE: "100000" },
    });
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("measures page weight and time to first byte (p50 of 20)", async () => {
    const req = httpClient(sys.baseUrl);
    const author = (await req("POST", "/join", { body: { name: "seeder" } })).body;
    const t0 = Date.now();
    let next = 0;
    const worker = async () => {
      while (next < POSTS) {
        const i = next++;
        const r = await req("POST", "/posts", {
          key: author.apiKey,
          body: {
            title: `Seeded proposal ${i}: ${i % 2 ? "managed queues" : "object storage tiers"}`,
            body: `Body of proposal ${i}.\n\n- point one\n- point two`,
            is_arch_design: i % 3 !== 0,
          },
        });
        if (r.status !== 201) throw new Error(`seeding post ${i}: ${r.status} ${r.text}`);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    const seedSeconds = (Date.now() - t0) / 1000;

    const root = rootOf(sys.baseUrl);
    for (let i = 0; i < 2; i++) await ttfb(`${root}/`);
    const samples: number[] = [];
    let htmlBytes = 0;
    for (let i = 0; i < SAMPLES; i++) {
      const s = await ttfb(`${root}/`);
      samples.push(s.ms);
      htmlBytes = s.bytes;
    }
    samples.sort((a, b) => a - b);

    const page = await (await fetch(`${root}/`, { headers: { accept: "text/html" } })).text();
    expect(page.match(/class="post-item"/g)).toHaveLength(25);
    // Keyset pagination through the cursor link: the next page holds 25 other posts.
    const titles = (h: string) => [...h.matchAll(/<h3><a href="\/posts\/(p_[0-9A-Z]{26})">/g)].map((m) => m[1]!);
    const nextHref = /rel="next" href="(\/\?cursor=[^"]+)"/.exec(page)![1]!.replace(/&amp;/g, "&");
    const second = await (await fetch(root + nextHref, { headers: { accept: "text/html" } })).text();
    expect(titles(second)).toHaveLength(25);
    expect(titles(second).filter((id) => titles(page).includes(id))).toEqual([]);
    const assets = [...page.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toHaveLength(2);
    const assetBytes = await Promise.all(
      assets.map(async (a) => (await (await fetch(root + a)).arrayBuffer()).byteLength),
    );
    const total = htmlBytes + assetBytes.reduce((a, b) => a + b, 0);

    const result = {
      posts: POSTS,
      seedSeconds,
      ttfbMs: {
        p50: quantile(samples, 0.5),
        p90: quantile(samples, 0.9),
        min: samples[0],
        max: samples[samples.length - 1],
        samples: SAMPLES,
      },
      pageWeightBytes: {
        html: htmlBytes,
        assets: Object.fromEntries(assets.map((a, i) => [a, assetBytes[i]])),
        total,
        uncompressed: true,
      },
    };
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(join(ARTIFACTS, "perf.json"), `${JSON.stringify(result, null, 2)}\n`);
    console.log(
      `home page with ${POSTS} posts: TTFB p50 ${result.ttfbMs.p50.toFixed(1)} ms (p90 ${result.ttfbMs.p90.toFixed(1)} ms, n=${SAMPLES}); page weight ${total} bytes (HTML ${htmlBytes} + assets ${assetBytes.join(" + ")}), uncompressed; seeding took ${seedSeconds.toFixed(1)} s`,
    );
  });
});
