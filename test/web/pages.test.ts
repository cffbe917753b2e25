import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join as pathJoin } from "node:path";
import { promisify } from "node:util";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { httpClient } from "@aps/testkit";
import { joinAgent } from "../support/fixtures.js";
import { ROOT, startSystem, type System } from "../support/system.js";
import { waitStrictly } from "../support/wait.js";
import { ARTIFACTS, hasChromium, launch, rootOf } from "./browser.js";

/**
 * Web pages in a real browser (docs/design/edge.md#web-pages): Debian's chromium through playwright-core against the
 * embedded all-in-one server. A person joins, signs in with the key, posts, votes and comments;
 * councillors (seats granted with the admin CLI) nominate, ballot, hand off and complete from
 * the page; the page shows `adopted` with the ballot reasons. Reading works with JavaScript off.
 * Screenshots of every page go to test/artifacts/web/ (APS_UPDATE_SCREENSHOTS=1 also refreshes
 * docs/screenshots/proposal.png).
 */
const enabled = hasChromium();
const run = promisify(execFile);
const CLI = pathJoin(ROOT, "services/cli/dist/main.js");

(enabled ? describe : describe.skip)(
  "web pages in chromium (embedded all-in-one)" + (enabled ? "" : " (SKIPPED: no chromium)"),
  () => {
    let sys: System;
    let browser: Browser;
    let root: string;
    let req: ReturnType<typeof httpClient>;
    /** Console errors and uncaught page errors (CSP violations show up here), per test. */
    let problems: string[] = [];
    let postId = "";
    let postUrl = "";

    beforeAll(async () => {
      sys = await startSystem("embedded", { env: { JOINS_PER_SOURCE_PER_DAY: "1000", POSTS_PER_DAY: "100" } });
      root = rootOf(sys.baseUrl);
      req = httpClient(sys.baseUrl);
      browser = await launch();
    });
    afterAll(async () => {
      await browser?.close();
      await sys?.stop();
    });
    beforeEach(() => {
      problems = [];
    });

    async function context(opts: { javaScriptEnabled?: boolean } = {}): Promise<BrowserContext> {
      const ctx = await browser.newContext({ baseURL: root, viewport: { width: 1100, height: 900 }, ...opts });
      ctx.on("page", watch);
      return ctx;
    }
    function watch(page: Page) {
      page.on("console", (m) => {
        if (m.type() === "error" && !/status of 40[04]/.test(m.text())) problems.push(`console: ${m.text()}`);
      });
      page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    }
    async function shot(page: Page, name: string) {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: pathJoin(ARTIFACTS, `${name}.png`), fullPage: true });
    }
    async function grant(agentId: string, seat: "councillor" | "chief") {
      await run(process.execPath, [CLI, "seats", "grant", agentId, seat], {
        env: { ...process.env, APS_URL: sys.baseUrl, APS_ADMIN_TOKEN: sys.adminToken },
      });
    }
    async function signIn(page: Page, key: string) {
      await page.goto("/");
      await page.getByLabel("Sign in with key").fill(key);
      await page.locator("#signin button[type=submit]").click();
      await page.locator("#whoami").waitFor({ state: "visible" });
    }
    /** Submits a form whose success reloads the page, and waits for the reloaded document. */
    async function submitAndReload(page: Page, click: () => Promise<void>) {
      const reloaded = page.waitForEvent("load");
      await click();
      await reloaded;
    }

    it("a person joins, sees the key once, signs in with it, posts a proposal, votes and comments", async () => {
      const ctx = await context();
      const page = await ctx.newPage();
      await page.goto("/join");
      await page.getByLabel("Name").fill("Ada from the browser");
      await page.getByRole("button", { name: "Create my identity" }).click();
      const keyBox = page.locator("#new-key");
      await keyBox.waitFor({ state: "visible" });
      const key = (await keyBox.textContent()) ?? "";
      expect(key).toMatch(/^sk_src_\w{40,}$/);
      await expect(page.locator("#key-once .warning").textContent()).resolves.toMatch(/shown only once/);
      await shot(page, "join");
      // Nothing is stored until the person signs in, and never a cookie.
      expect(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie])).toEqual([
        0,
        0,
        "",
      ]);

      await page.getByLabel("Sign in with key").fill(key);
      await page.locator("#signin button[type=submit]").click();
      await page.locator("#whoami").waitFor({ state: "visible" });
      expect(await page.locator("#whoami-name").textContent()).toBe("Ada from the browser");
      expect(await page.evaluate(() => sessionStorage.getItem("aps.key"))).toBe(key);

      await page.goto("/");
      await page.getByLabel("Title").fill("Add a managed Redis offering");
      await page
        .getByLabel("Body (Markdown)")
        .fill(
          "## Why\n\nTeams run **their own** Redis today.\n\n- fewer pages at night\n- one [runbook](https://example.org/runbook)",
        );
      // "Check first" is a dry run: the page says it would be accepted, and nothing is published
      await page.getByRole("button", { name: "Check first" }).click();
      await page.locator("#post-form .form-note").waitFor({ state: "visible" });
      expect(await page.locator("#post-form .form-note").textContent()).toMatch(/would be accepted/);
      const listed = await req("GET", "/posts?sort=new&limit=50");
      expect(JSON.stringify(listed.body)).not.toContain("Add a managed Redis offering");
      expect(page.url()).not.toMatch(/\/posts\//);
      await Promise.all([
        page.waitForURL(/\/posts\/p_[0-9A-Z]{26}$/),
        page.getByRole("button", { name: "Publish" }).click(),
      ]);
      postUrl = new URL(page.url()).pathname;
      postId = postUrl.split("/").pop()!;
      expect(await page.locator("h1#post-title").textContent()).toBe("Add a managed Redis offering");
      expect(await page.locator("#post-body strong").textContent()).toBe("their own");
      expect(await page.locator("#post-body a").getAttribute("rel")).toBe("nofollow ugc noopener noreferrer");

      await submitAndReload(page, () => page.getByRole("button", { name: "▲ Vote for" }).click());
      expect(await page.locator(".vote .n-for").textContent()).toBe("1");
      await page.waitForFunction(
        () => document.querySelector("#vote-form button[value='1']")?.getAttribute("aria-pressed") === "true",
      );

      await page.getByLabel("Your comment (Markdown)").fill("I would *use* this on day one.");
      await submitAndReload(page, () => page.getByRole("button", { name: "Comment" }).click());
      expect(await page.locator(".comment-list .comment em").textContent()).toBe("use");

      // The writes went through the public API: the API sees them too.
      const api = (await req("GET", `/posts/${postId}`, { key })).body;
      expect(api).toMatchObject({
        title: "Add a managed Redis offering",
        votes: { for: 1, against: 0 },
        myVote: 1,
        status: "open",
      });
      expect(api.comments.map((c: { body: string }) => c.body)).toEqual(["I would *use* this on day one."]);
      expect(await ctx.cookies()).toEqual([]);
      await shot(page, "proposal-open");
      expect(problems).toEqual([]);
      await ctx.close();
    });

    it("a bad key is refused in the sign-in box and nothing is stored", async () => {
      const ctx = await context();
      const page = await ctx.newPage();
      await page.goto("/");
      await page.getByLabel("Sign in with key").fill("sk_src_notakey");
      await page.locator("#signin button[type=submit]").click();
      await page.locator("#signin-error").waitFor({ state: "visible" });
      expect(await page.locator("#signin-error").textContent()).toMatch(/not accepted/);
      expect(await page.evaluate(() => [localStorage.length, sessionStorage.length])).toEqual([0, 0]);
      expect(await page.locator("#post-form").isVisible()).toBe(false);
      await ctx.close();
    });

    it("councillors nominate and ballot from the page; it shows adopted and both reasons; the chief hands off and completes", async () => {
      expect(postId).not.toBe("");
      const chief = await joinAgent(sys, "Chief Grace");
      const councillor = await joinAgent(sys, "Councillor Linus");
      await grant(chief.agentId, "chief");
      await grant(councillor.agentId, "councillor");

      const ctxA = await context();
      const a = await ctxA.newPage();
      await signIn(a, chief.apiKey);
      expect(await a.locator("#whoami-seats").textContent()).toMatch(/councillor/);
      await a.goto(postUrl);
      await submitAndReload(a, () => a.getByRole("button", { name: "Nominate for Council review" }).click());
      expect(await a.locator(".proposal header .badge").getAttribute("data-status")).toBe("review");
      await a.locator("#ballot-form").getByLabel("approve").check();
      await a.getByLabel("Reason (public)").fill("Approve: the <b>on-call</b> load drops & costs are capped.");
      await submitAndReload(a, () => a.getByRole("button", { name: "Cast ballot" }).click());
      expect(await a.locator(".council .reason").allTextContents()).toEqual([
        "Approve: the <b>on-call</b> load drops & costs are capped.",
      ]);

      // The agenda lists the case with the ballot so far and a countdown to the deadline.
      await a.goto("/agenda");
      expect(await a.locator(".case h2 a").allTextContents()).toContain("Add a managed Redis offering");
      expect(await a.locator(".case [data-deadline]").first().textContent()).toMatch(/^in \d+ d \d+ h$/);
      await shot(a, "agenda");

      const ctxB = await context();
      const b = await ctxB.newPage();
      await signIn(b, councillor.apiKey);
      await b.goto(postUrl);
      await b.locator("#ballot-form").getByLabel("approve").check();
      await b.getByLabel("Reason (public)").fill("Approve: clear rollback plan.");
      await submitAndReload(b, () => b.getByRole("button", { name: "Cast ballot" }).click());
      expect(await b.locator(".proposal header .badge").textContent()).toBe("adopted");
      expect(await b.locator(".council .reason").allTextContents()).toEqual(
        expect.arrayContaining([
          "Approve: the <b>on-call</b> load drops & costs are capped.",
          "Approve: clear rollback plan.",
        ]),
      );
      expect(await b.locator("#ballot-form").count()).toBe(0); // no ballots after the case closed
      expect(await b.locator("#handoff-form").isVisible()).toBe(false); // a councillor without the chief seat
      await shot(b, "proposal");
      if (process.env.APS_UPDATE_SCREENSHOTS === "1") {
        mkdirSync(pathJoin(ROOT, "docs/screenshots"), { recursive: true });
        await b.setViewportSize({ width: 1000, height: 800 });
        await b.screenshot({ path: pathJoin(ROOT, "docs/screenshots/proposal.png"), fullPage: true });
      }

      await a.goto(postUrl);
      await a.locator("#handoff-form").getByLabel("task (an executor").check();
      await a.getByLabel("Executor (optional)").fill("team-storage");
      await submitAndReload(a, () => a.getByRole("button", { name: "Record hand-off" }).click());
      expect(await a.locator(".proposal header .badge").getAttribute("data-status")).toBe("implementing");
      expect(await a.locator(".handoff").textContent()).toMatch(/task.*team-storage.*Chief Grace/s);
      await submitAndReload(a, () => a.getByRole("button", { name: "Mark implementation complete" }).click());
      expect(await a.locator(".proposal header .badge").getAttribute("data-status")).toBe("completed");
      const steps = await a
        .locator(".timeline .badge")
        .evaluateAll((els) => els.map((e) => e.getAttribute("data-status")));
      expect(steps).toEqual(["open", "review", "adopted", "implementing", "completed"]);
      expect(problems).toEqual([]);
      await ctxA.close();
      await ctxB.close();
    });

    it("a councillor raises a concern that holds an approval back, resolves it; the executor reports progress as a bar (docs/design/council.md#duplicates)", async () => {
      const author = await joinAgent(sys, "Author Ken");
      const ada = await joinAgent(sys, "Councillor Ada");
      const bob = await joinAgent(sys, "Councillor Bob");
      const hopper = await joinAgent(sys, "Chief Hopper");
      const exec = await joinAgent(sys, "Executor Edsger");
      await grant(ada.agentId, "councillor");
      await grant(bob.agentId, "councillor");
      await grant(hopper.agentId, "chief");
      const created = await req("POST", "/posts", {
        key: author.apiKey,
        body: { title: "Tiered object storage", body: "Move cold objects to a cheaper tier.", is_arch_design: true },
      });
      const id = created.body.id as string;
      expect((await req("POST", `/posts/${id}/nominate`, { key: ada.apiKey })).status).toBe(200);

      const ctx = await context();
      const page = await ctx.newPage();
      await signIn(page, ada.apiKey);
      await page.goto(`/posts/${id}`);
      await page.getByLabel("Raise a blocking concern").fill("Retrieval latency of the cold tier is not stated.");
      await submitAndReload(page, () => page.getByRole("button", { name: "Raise concern" }).click());
      expect(await page.locator(".concern-open .concern-reason").textContent()).toBe(
        "Retrieval latency of the cold tier is not stated.",
      );

      // a decisive approval majority waits while the concern is open
      for (const c of [bob, hopper])
        expect(
          (await req("POST", `/posts/${id}/council`, { key: c.apiKey, body: { vote: "approve", reason: "Cheaper." } }))
            .body.status,
        ).toBe("review");
      await page.reload();
      expect(await page.locator(".proposal header .badge").getAttribute("data-status")).toBe("review");
      await page.getByLabel("Resolution note").fill("Section 3 now gives p99 retrieval times.");
      await submitAndReload(page, () => page.getByRole("button", { name: "Resolve" }).click());
      expect(await page.locator(".proposal header .badge").getAttribute("data-status")).toBe("adopted");
      expect(await page.locator(".concern-resolved .concern-resolution").textContent()).toMatch(
        /Resolved by Councillor Ada .*Section 3 now gives p99 retrieval times\./s,
      );
      expect(
        (
          await req("POST", `/posts/${id}/handoff`, {
            key: hopper.apiKey,
            body: { implementation: "task", executor: exec.agentId },
          })
        ).status,
      ).toBe(200);
      await ctx.close();

      const ctxE = await context();
      const e = await ctxE.newPage();
      await signIn(e, exec.apiKey);
      await e.goto(`/posts/${id}`);
      await e.getByLabel("Percent done").fill("40");
      await e.getByLabel("Note", { exact: true }).fill("Lifecycle rules deployed in staging.");
      await submitAndReload(e, () => e.getByRole("button", { name: "Report" }).click());
      expect(await e.locator("#progress progress").getAttribute("value")).toBe("40");
      // the executor named by its id shows as its name, linked to its profile
      const executor = e.locator(".handoff-executor a");
      expect(await executor.textContent()).toBe("Executor Edsger");
      expect(await executor.getAttribute("href")).toBe(`/agents/${exec.agentId}`);
      expect(await e.locator("#progress").textContent()).toMatch(
        /40%.*Lifecycle rules deployed in staging\..*Executor Edsger/s,
      );
      expect(await e.locator(".timeline .event").allTextContents()).toEqual([
        "concern raised",
        "concern resolved",
        "progress",
      ]);
      await shot(e, "proposal-concern-progress");
      expect(problems).toEqual([]);
      await ctxE.close();
    });

    it("the language picker shows a machine translation as 'original prevails', and degrades when the endpoint is missing", async () => {
      const ctx = await context();
      const page = await ctx.newPage();
      await page.goto(postUrl);
      await page.getByRole("button", { name: "Translate" }).click();
      // Whatever the server answers (route absent, not cached, no engine), the page says so and keeps the original.
      await page.waitForFunction(() => (document.querySelector("#translation")?.textContent ?? "") !== "Translating…");
      expect(await page.locator("#translation").textContent()).toMatch(
        /not available|No cached translation|original prevails/,
      );
      expect(await page.locator("h1#post-title").textContent()).toBe("Add a managed Redis offering");

      // Translation endpoint stubbed in the browser (built in parallel, another issue): the shape
      // of its contract, with markup in the translated text that must stay text.
      await page.route(/\/v1\/posts\/[^/]+\/translation\?lang=de$/, (route) =>
        route.fulfill({
          status: 200,
          contentType: "application/json",
          body: JSON.stringify({
            id: postId,
            lang: "de",
            sourceLang: "en",
            title: "Verwaltetes Redis <img src=x onerror=window.__pwned=1>",
            body: "## Warum\n\n<script>window.__pwned=1</script>",
            engine: "apertium",
            machineTranslation: true,
            originalPrevails: true,
          }),
        }),
      );
      await page.getByLabel("Read in").selectOption("de");
      await page.getByRole("button", { name: "Translate" }).click();
      await page.locator("#translation .mt-note").waitFor();
      expect(await page.locator("#translation .mt-note").textContent()).toMatch(
        /Machine translation .*— the original prevails/,
      );
      expect(await page.locator("#translation h2").textContent()).toBe(
        "Verwaltetes Redis <img src=x onerror=window.__pwned=1>",
      );
      expect(await page.locator("#translation").getAttribute("lang")).toBe("de");
      expect(await page.locator("#translation img, #translation script").count()).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      await ctx.close();
    });

    it("reading works with JavaScript disabled: home, proposal, agenda, search, profile and docs", async () => {
      const author = await joinAgent(sys, "Reader's author");
      const nominator = await joinAgent(sys, "Nominating councillor");
      await grant(nominator.agentId, "councillor");
      const created = await req("POST", "/posts", {
        key: author.apiKey,
        body: {
          title: "Quarterly kernel upgrades",
          body: "Upgrade **kernels** every quarter; zanzibarquux keyword.",
          is_arch_design: true,
        },
      });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      expect((await req("POST", `/posts/${id}/nominate`, { key: nominator.apiKey })).status).toBe(200);
      await req("POST", `/posts/${id}/comments`, {
        key: nominator.apiKey,
        body: { body: "Nominated; see the `kernel` policy." },
      });
      // The post reaches the search index through events: wait for it (≤ 10 s, stretched on a loaded machine).
      await waitStrictly(
        "the post in the search index",
        async () => (await req("GET", "/knowledge/search?q=zanzibarquux")).body.total === 1,
        { timeoutMs: 10_000, intervalMs: 100 },
      );

      const ctx = await context({ javaScriptEnabled: false });
      const page = await ctx.newPage();
      await page.goto("/");
      expect(await page.locator(".post-item h3 a").allTextContents()).toEqual(
        expect.arrayContaining(["Quarterly kernel upgrades", "Add a managed Redis offering"]),
      );
      expect(await page.locator("#post-form").isVisible()).toBe(false); // writing needs JS; reading does not
      await shot(page, "home");
      await page.goto("/?sort=new&kind=arch");
      expect(await page.locator(".post-item h3 a").first().textContent()).toBe("Quarterly kernel upgrades");

      await page.getByRole("link", { name: "Quarterly kernel upgrades" }).first().click();
      expect(await page.locator("#post-body strong").textContent()).toBe("kernels");
      expect(await page.locator(".comment code").textContent()).toBe("kernel");
      expect(await page.locator(".council .reason").allTextContents()).toEqual(["Nominated for Council review."]);

      await page.goto("/agenda");
      expect(await page.locator(".case h2 a").allTextContents()).toContain("Quarterly kernel upgrades");
      expect(await page.locator(".case [data-deadline]").first().textContent()).toMatch(/^in 6 d 23 h$|^in 7 d 0 h$/);

      await page.goto("/search?q=zanzibarquux");
      expect(await page.locator(".hit h2 a").allTextContents()).toEqual(["Quarterly kernel upgrades"]);
      expect(await page.locator(".hit h2 a").getAttribute("href")).toBe(`/posts/${id}`);
      expect(await page.locator(".hit mark").first().textContent()).toMatch(/zanzibarquux/i);
      await shot(page, "search");
      await page.goto("/search?q=council&tags=docs");
      expect(await page.locator(".hit").count()).toBeGreaterThan(0);
      expect(await page.locator(".hit h2 a").first().getAttribute("href")).toMatch(/^\/docs\/[a-z-]+$/);

      await page.goto(`/agents/${nominator.agentId}`);
      expect(await page.locator("h1").textContent()).toBe("Nominating councillor");
      expect(await page.locator(".seats").textContent()).toBe("councillor");
      expect(await page.locator(".sagacity").textContent()).toBe("0");
      expect(await page.locator("#recent-posts + .posts .post-item").count()).toBe(0); // the nominator wrote nothing
      await page.goto(`/agents/${author.agentId}`);
      expect(await page.locator("#recent-posts + .posts .post-item h3 a").allTextContents()).toContain(
        "Quarterly kernel upgrades",
      );
      await shot(page, "agent");

      await page.goto("/docs");
      await shot(page, "docs");
      await page.getByRole("link", { name: "The agent interface (skill.md)" }).click();
      expect(await page.locator("article.doc h1, article.doc h2").count()).toBeGreaterThan(0);
      await page.goto("/docs");
      const firstDoc = page.locator(".doc-list a").first();
      const docHref = await firstDoc.getAttribute("href");
      await firstDoc.click();
      expect(page.url()).toBe(root + docHref);
      expect(await page.locator(".crumbs a", { hasText: "Markdown source" }).getAttribute("href")).toBe(
        `${docHref}.md`,
      );
      await shot(page, "doc-page");

      const missing = await page.goto("/posts/p_01ARZ3NDEKTSV4RRFFQ69G5FAV");
      expect(missing?.status()).toBe(404);
      expect(await page.locator("h1").textContent()).toBe("Not found");
      await shot(page, "not-found");
      expect((await page.goto("/no/such/page"))?.status()).toBe(404);
      expect(await page.locator("h1").textContent()).toBe("Page not found");
      expect((await page.goto("/?sort=sideways"))?.status()).toBe(400);
      expect(problems).toEqual([]);
      await ctx.close();
    });

    it("shows a thread of replies two levels deep and a revision history; the author edits from the page", async () => {
      const author = await joinAgent(sys, "Threading author");
      const bob = await joinAgent(sys, "Bob Replier");
      const created = await req("POST", "/posts", {
        key: author.apiKey,
        body: { title: "Threads please", body: "First text.", is_arch_design: true, tags: ["web", "threads"] },
      });
      const id = created.body.id as string;
      const comment = (body: string, key: string, parentId?: string) =>
        req("POST", `/posts/${id}/comments`, { key, body: parentId ? { body, parentId } : { body } });
      const top = (await comment("Top comment", bob.apiKey)).body;
      const reply = (await comment("A reply", author.apiKey, top.id)).body;
      await comment("A reply to the reply", bob.apiKey, reply.id);
      expect((await req("PATCH", `/posts/${id}`, { key: author.apiKey, body: { body: "Second text." } })).status).toBe(
        200,
      );

      const ctx = await context();
      const page = await ctx.newPage();
      await signIn(page, author.apiKey);
      await page.goto(`/posts/${id}`);
      const thread = page.locator(".comment-list > li.thread").first();
      expect((await thread.locator(".thread-root .comment .markdown").textContent())?.trim()).toBe("Top comment");
      const replies = thread.locator(".replies > li.comment");
      expect(await replies.count()).toBe(2);
      expect(await replies.nth(0).locator(".in-reply-to").count()).toBe(0);
      expect(await replies.nth(1).locator(".in-reply-to").textContent()).toContain("in reply to Threading author");
      expect(await page.locator(".tags .tag").allTextContents()).toEqual(["threads", "web"]);
      // the author's edit form is shown to the author: a third revision from the page
      await page.locator(".edit-post").waitFor({ state: "visible" });
      await page.locator("#edit-title").fill("Threads, please");
      await Promise.all([page.waitForEvent("load"), page.locator("#edit-form button[type=submit]").click()]);
      expect(await page.locator("#post-title").textContent()).toBe("Threads, please");
      await shot(page, "thread");
      await page.locator("a.edited").first().click();
      await page.waitForURL(`**/posts/${id}/revisions`);
      const revs = page.locator(".revision-list > li.revision");
      expect(await revs.count()).toBe(3);
      expect(await revs.first().locator("h2").textContent()).toBe("Revision 3: Threads, please");
      expect(await revs.nth(2).locator(".markdown").textContent()).toContain("First text.");
      await shot(page, "revisions");
      expect(problems).toEqual([]);
      await ctx.close();
    });

    it("follows the system colour scheme, fits a phone screen, and the first Tab reaches the skip link", async () => {
      const background = async (colorScheme: "light" | "dark") => {
        const ctx = await browser.newContext({ baseURL: root, colorScheme, viewport: { width: 1000, height: 800 } });
        const page = await ctx.newPage();
        await page.goto(postUrl);
        const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
        await shot(page, `proposal-${colorScheme}`);
        await ctx.close();
        return bg;
      };
      const [light, dark] = [await background("light"), await background("dark")];
      const lum = (rgb: string) =>
        rgb
          .match(/\d+/g)!
          .slice(0, 3)
          .map(Number)
          .reduce((a, b) => a + b, 0);
      expect(lum(light)).toBeGreaterThan(600);
      expect(lum(dark)).toBeLessThan(150);

      const ctx = await browser.newContext({ baseURL: root, viewport: { width: 375, height: 740 }, isMobile: true });
      const phone = await ctx.newPage();
      for (const path of ["/", postUrl, "/agenda", "/search?q=redis", "/join", "/docs"]) {
        await phone.goto(path);
        const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect({ path, overflow }).toEqual({ path, overflow: 0 });
      }
      await phone.goto(postUrl);
      await shot(phone, "proposal-phone");
      await phone.keyboard.press("Tab");
      expect(await phone.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
      await phone.keyboard.press("Enter");
      expect(await phone.evaluate(() => document.activeElement?.id)).toBe("main");
      await ctx.close();
    });

    it("pages carry a CSP without inline script, no cookies, and the API and Markdown docs answer as before", async () => {
      const res = await fetch(`${root}/`, { headers: { accept: "text/html" } });
      const htmlText = await res.text();
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toMatch(/script-src 'self'(;|$)/);
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
      expect(csp).toMatch(/form-action 'self'/);
      expect(csp).toMatch(/connect-src 'self'/);
      expect(res.headers.get("set-cookie")).toBeNull();
      expect(htmlText.match(/<script\b[^>]*>/g)).toEqual([
        expect.stringMatching(/^<script src="\/assets\/app\.[0-9a-f]{12}\.js" defer>$/),
      ]);
      expect(htmlText).not.toMatch(/\son[a-z]+=/i);
      const asset = /href="(\/assets\/app\.[0-9a-f]{12}\.css)"/.exec(htmlText)![1]!;
      const css = await fetch(root + asset);
      expect(css.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(css.headers.get("content-type")).toMatch(/^text\/css/);
      // For agents: Markdown docs — `/docs/<page>` too when the client does not prefer HTML (docs/design/agents.md#discovery) —
      // and problem+json 404s for non-HTML clients, /v1.
      expect((await fetch(`${root}/docs/llms.txt`)).headers.get("content-type")).toMatch(/^text\/plain/);
      expect(
        (await fetch(`${root}/docs/voting.md`, { headers: { accept: "text/html" } })).headers.get("content-type"),
      ).toMatch(/^text\/markdown/);
      expect((await fetch(`${root}/docs/voting`)).headers.get("content-type")).toMatch(/^text\/markdown/);
      expect(
        (await fetch(`${root}/docs/voting`, { headers: { accept: "text/html" } })).headers.get("content-type"),
      ).toMatch(/^text\/html/);
      expect((await fetch(`${root}/nope`)).headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(
        (await fetch(`${root}/v1/nope`, { headers: { accept: "text/html" } })).headers.get("content-type"),
      ).toMatch(/^application\/problem\+json/);
      expect((await fetch(`${root}/healthz`)).status).toBe(200);
    });
  },
);
