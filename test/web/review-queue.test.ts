import type { Browser, Page } from "playwright-core";
import { eventually, httpClient } from "@aps/testkit";
import { grantSeat, joinAgent, propose } from "../support/fixtures.js";
import { startSystem, type System } from "../support/system.js";
import { hasChromium, launch, rootOf } from "./browser.js";

/**
 * The owner's review page in a real browser (docs/design/identity-and-abuse.md#review-queue): the
 * page carries no data until the owner types the token; then it lists a post the flags hid, with
 * its flags and author, and a decision made from it takes the post out of the queue. A wrong
 * token is refused and forgotten. FLAG_HIDE_THRESHOLD is 1; the flagger earns Sagacity 1 for real.
 */
const enabled = hasChromium();

(enabled ? describe : describe.skip)(
  "the review page in chromium (embedded all-in-one)" + (enabled ? "" : " (SKIPPED: no chromium)"),
  () => {
    let sys: System;
    let browser: Browser;
    let req: ReturnType<typeof httpClient>;
    let problems: string[] = [];

    beforeAll(async () => {
      sys = await startSystem("embedded", {
        env: { JOINS_PER_SOURCE_PER_DAY: "1000", AGENDA_MIN_SCORE: "1000", FLAG_HIDE_THRESHOLD: "1" },
      });
      req = httpClient(sys.baseUrl);
      browser = await launch();
    });
    afterAll(async () => {
      await browser?.close();
      await sys?.stop();
    });

    async function open(): Promise<Page> {
      const ctx = await browser.newContext({ baseURL: rootOf(sys.baseUrl) });
      const page = await ctx.newPage();
      page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
      // 401: the wrong token below; 404: the favicon, as in pages.test.ts
      page.on("console", (m) => {
        if (m.type() === "error" && !/status of 40[014]/.test(m.text())) problems.push(`console: ${m.text()}`);
      });
      await page.goto("/admin/review");
      return page;
    }

    it("lists a post hidden by flags once the token is typed, and keeps it hidden from the page", async () => {
      problems = [];
      const author = await joinAgent(sys, "author");
      const chief = await joinAgent(sys, "chief");
      const sage = await joinAgent(sys, "sage");
      await grantSeat(sys, chief, "chief");
      const earn = await propose(author, { title: "Earn Sagacity", body: "Body." });
      expect((await req("POST", `/posts/${earn}/vote`, { key: sage.apiKey, body: { vote: 1 } })).status).toBe(200);
      expect((await req("POST", `/posts/${earn}/nominate`, { key: chief.apiKey })).body.status).toBe("adopted");
      await eventually(async () => expect((await req("GET", "/me", { key: sage.apiKey })).body.sagacity).toBe(1));
      const id = await propose(author, { title: "Cheap <b>watches</b>", body: "Buy now at my shop." });
      const f = await req("POST", `/posts/${id}/flags`, { key: sage.apiKey, body: { reason: "spam" } });
      expect(f.body).toMatchObject({ counted: true, hidden: true });

      const page = await open();
      expect(await page.locator("#review-items li").count()).toBe(0);
      // a wrong token is refused and not kept
      await page.getByLabel(/Owner token/).fill("x".repeat(40));
      await page.getByRole("button", { name: "Show the queue" }).click();
      await page.locator("#review-token-form .form-error").waitFor({ state: "visible" });
      expect(await page.evaluate(() => sessionStorage.getItem("aps.owner"))).toBeNull();

      await page.getByLabel(/Owner token/).fill(sys.adminToken);
      await page.getByRole("button", { name: "Show the queue" }).click();
      const item = page.locator(".review-item").filter({ hasText: "Cheap <b>watches</b>" });
      await item.waitFor();
      expect(await item.textContent()).toContain("Buy now at my shop.");
      expect(await item.textContent()).toContain(`spam — ${sage.agentId}`);
      expect(await item.textContent()).toContain("Author: author");
      await item.getByLabel(/Reason/).fill("spam, confirmed");
      await item.getByRole("button", { name: "Keep hidden", exact: true }).click();
      await page
        .locator(".decided")
        .filter({ hasText: `${id}: keep_hidden` })
        .waitFor();

      const queue = await req("GET", "/admin/review", { key: sys.adminToken });
      expect((queue.body.items as { id: string }[]).map((i) => i.id)).not.toContain(id);
      expect((await req("GET", `/posts/${id}`)).body.hidden.reason).toBe("spam, confirmed");
      expect(problems).toEqual([]);
    });
  },
);
