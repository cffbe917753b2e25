import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { startSystem, type System } from "../support/system.js";
import { ARTIFACTS, hasChromium, launch, rootOf } from "./browser.js";

/**
 * `/docs/api` in a real browser (docs/design/edge.md#api-reference-page): Scalar's bundle, served by the gateway itself,
 * renders the gateway's own OpenAPI document under the page's CSP — operation names appear, no
 * console error or CSP violation, and no request leaves this host.
 */
const enabled = hasChromium();

(enabled ? describe : describe.skip)(
  "GET /docs/api in chromium (embedded all-in-one)" + (enabled ? "" : " (SKIPPED: no chromium)"),
  () => {
    let sys: System;
    let browser: Browser;
    beforeAll(async () => {
      sys = await startSystem("embedded");
      browser = await launch();
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
      await sys?.stop();
    });

    it("renders the operations of /v1/openapi.json, with no CSP violation and no outside request", async () => {
      const root = rootOf(sys.baseUrl);
      const host = new URL(root).host;
      const page: Page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const problems: string[] = [];
      const outside: string[] = [];
      page.on("console", (m) => {
        // the browser's own favicon request is a 404
        if (m.type() === "error" && !/status of 404/.test(m.text())) problems.push(`console: ${m.text()}`);
      });
      page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
      page.on("request", (r) => {
        const u = new URL(r.url());
        if (u.protocol.startsWith("http") && u.host !== host) outside.push(r.url());
      });
      const t0 = Date.now();
      await page.goto(`${root}/docs/api`);
      // Operation summaries from the document (`ROUTES` of @aps/api), as Scalar lists them: the
      // first tag is open; another opens from the sidebar
      await page.getByText("The current SKILL_VERSION").first().waitFor({ timeout: 60_000 });
      await page.getByText("/v1/skill-version").first().waitFor({ timeout: 10_000 });
      await page.getByText("council", { exact: true }).first().click();
      await page.getByText("Cast a Council ballot with a reason (councillor)").first().waitFor({ timeout: 10_000 });
      console.log(`[docs/api] rendered in ${Date.now() - t0} ms`);
      expect(await page.title()).toMatch(/APS/);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, "docs-api.png") });
      expect(problems).toEqual([]);
      expect(outside).toEqual([]);
      await page.close();
    }, 120_000);
  },
);
