import type { Browser, Page } from "playwright-core";
import { httpClient } from "@aps/testkit";
import { startSystem, type System } from "../support/system.js";
import { waitStrictly } from "../support/wait.js";
import { hasChromium, launch, rootOf } from "./browser.js";

/**
 * XSS in the browser (docs/design/edge.md#web-pages): posts, comments, names and ballot reasons carrying script tags,
 * `javascript:` links, event-handler attributes, Markdown link/image tricks and HTML entities
 * render inert. Asserted in chromium on every page that shows them: no dialog opens, the
 * `window.__pwned` sentinel the payloads set stays undefined, no `javascript:`/`data:`/`vbscript:`
 * URL and no `on*` attribute is in the DOM, and the only script is the site's own. Each page is
 * checked twice: as served (with the CSP) and with the CSP bypassed, so escaping and sanitising
 * are proven on their own and not only by the CSP.
 */
const enabled = hasChromium();

const SENTINEL = "window.__pwned=1";
const TITLE = `<script>${SENTINEL}</script>"><img src=x onerror="${SENTINEL};alert(1)"> &amp; &lt;b&gt;`;
const NAME = `<img src=x onerror=${SENTINEL}>`;
const BODY = [
  `<script>${SENTINEL}</script>`,
  `<img src=x onerror="${SENTINEL};alert(1)">`,
  `<svg onload=alert(1)><circle/></svg>`,
  `<a href="javascript:${SENTINEL}">raw html link</a>`,
  `<iframe src="javascript:alert(1)"></iframe>`,
  `<details open ontoggle=alert(1)><summary>x</summary></details>`,
  `<style>body{display:none}</style>`,
  ``,
  `[md link](javascript:${SENTINEL})`,
  `[upper](JaVaScRiPt:alert(1))`,
  `[entity](&#106;avascript:alert(1))`,
  `[colon](javascript&colon;alert(1))`,
  `[space]( javascript:alert(1))`,
  `[tab](java\tscript:alert(1))`,
  `[vb](vbscript:msgbox(1))`,
  `[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)`,
  `[proto-relative](//evil.example/x)`,
  `![img js](javascript:alert(1))`,
  `![img attr](x" onerror="alert(1))`,
  `[title attr](https://ok.example "x\\" onmouseover=\\"alert(1)")`,
  `[ref][r]`,
  ``,
  `[r]: javascript:alert(1)`,
  ``,
  `<javascript:alert(1)>`,
  ``,
  "`<script>alert(1)</script>` in code",
  ``,
  `&lt;script&gt;alert(1)&lt;/script&gt; and &#60;img src=x onerror=alert(1)&#62;`,
  ``,
  `[ok link](https://example.org/fine)`,
].join("\n");

(enabled ? describe : describe.skip)(
  "XSS payloads render inert in chromium" + (enabled ? "" : " (SKIPPED: no chromium)"),
  () => {
    let sys: System;
    let browser: Browser;
    let root: string;
    let postId: string;
    let evilAgentId: string;

    beforeAll(async () => {
      sys = await startSystem("embedded", { env: { JOINS_PER_SOURCE_PER_DAY: "1000" } });
      root = rootOf(sys.baseUrl);
      const req = httpClient(sys.baseUrl);
      const evil = (
        await req("POST", "/join", { body: { name: NAME, url: `https://evil.example/"><script>${SENTINEL}</script>` } })
      ).body;
      evilAgentId = evil.agentId;
      const post = await req("POST", "/posts", {
        key: evil.apiKey,
        body: { title: TITLE, body: BODY, is_arch_design: true },
      });
      expect(post.status).toBe(201);
      postId = post.body.id;
      expect((await req("POST", `/posts/${postId}/comments`, { key: evil.apiKey, body: { body: BODY } })).status).toBe(
        201,
      );
      // A councillor with a hostile name and ballot reason, so the Council section carries them too.
      const c = (await req("POST", "/join", { body: { name: `"><svg onload=${SENTINEL}>` } })).body;
      expect(
        (await req("POST", "/admin/seats", { key: sys.adminToken, body: { agentId: c.agentId, seat: "councillor" } }))
          .status,
      ).toBeLessThan(300);
      const c2 = (await req("POST", "/join", { body: { name: "second seat" } })).body;
      await req("POST", "/admin/seats", { key: sys.adminToken, body: { agentId: c2.agentId, seat: "councillor" } });
      expect((await req("POST", `/posts/${postId}/nominate`, { key: c.apiKey })).status).toBe(200);
      expect(
        (
          await req("POST", `/posts/${postId}/council`, {
            key: c.apiKey,
            body: { vote: "approve", reason: `<img src=x onerror=${SENTINEL}> [x](javascript:alert(1))` },
          })
        ).status,
      ).toBe(200);
      // Wait until search has indexed the post (events), for the search page check.
      await waitStrictly(
        "the post in the search index",
        async () => (await req("GET", "/knowledge/search?q=script")).body.total >= 1,
        { timeoutMs: 10_000, intervalMs: 100 },
      );
      browser = await launch();
    });
    afterAll(async () => {
      await browser?.close();
      await sys?.stop();
    });

    /** Everything in the DOM that could run script or navigate to a script URL. */
    async function dangers(page: Page): Promise<string[]> {
      return page.evaluate(() => {
        const out: string[] = [];
        for (const el of Array.from(document.querySelectorAll("*"))) {
          for (const a of Array.from(el.attributes)) {
            if (/^on/i.test(a.name)) out.push(`${el.tagName} ${a.name}=${a.value}`);
            if (
              /^(href|src|action|formaction|xlink:href|srcdoc|data)$/i.test(a.name) &&
              /^\s*(javascript|vbscript|data):/i.test(a.value.replace(/[\u0000-\u0020]/g, ""))
            )
              out.push(`${el.tagName} ${a.name}=${a.value}`);
          }
        }
        for (const s of Array.from(document.scripts))
          if (!/^\/assets\/app\.[0-9a-f]{12}\.js$/.test(s.getAttribute("src") ?? ""))
            out.push(`script ${s.outerHTML.slice(0, 80)}`);
        for (const tag of ["iframe", "img", "svg", "style", "object", "embed", "details", "base"])
          for (const el of Array.from(document.querySelectorAll(tag))) out.push(`element ${el.outerHTML.slice(0, 80)}`);
        for (const f of Array.from(document.querySelectorAll("form[action]")))
          if (f.getAttribute("action") !== "/search") out.push(`form action=${f.getAttribute("action")}`);
        for (const a of Array.from(document.querySelectorAll("a[href]"))) {
          const href = a.getAttribute("href")!;
          if (href.startsWith("//")) out.push(`protocol-relative ${href}`);
        }
        return out;
      });
    }

    for (const bypassCSP of [false, true]) {
      it(`${bypassCSP ? "with the CSP bypassed (escaping alone)" : "as served (escaping + CSP)"}: proposal, home, agenda, profile and search stay inert`, async () => {
        const ctx = await browser.newContext({ baseURL: root, bypassCSP });
        const page = await ctx.newPage();
        const dialogs: string[] = [];
        page.on("dialog", (d) => {
          dialogs.push(d.message());
          void d.dismiss();
        });
        for (const path of [
          `/posts/${postId}`,
          "/",
          "/?sort=new&kind=arch",
          "/agenda",
          `/agents/${evilAgentId}`,
          "/search?q=script",
          `/search?q=${encodeURIComponent(`<script>${SENTINEL}</script>`)}`,
        ]) {
          await page.goto(path);
          await page.waitForLoadState("load");
          // Hover every link (catches injected onmouseover) and give timers a moment.
          for (const a of await page.locator("main a").all()) await a.hover({ timeout: 2_000 }).catch(() => undefined);
          await page.waitForTimeout(100);
          expect({ path, dangers: await dangers(page) }).toEqual({ path, dangers: [] });
          expect({
            path,
            pwned: await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned),
          }).toEqual({ path, pwned: undefined });
        }
        expect(dialogs).toEqual([]);

        // The hostile text is shown as text, exactly as written, not dropped.
        await page.goto(`/posts/${postId}`);
        expect(await page.locator("h1#post-title").textContent()).toBe(TITLE);
        expect(await page.locator(".proposal header .meta a").first().textContent()).toBe(NAME);
        expect(await page.locator("#post-body").textContent()).toContain(`<script>${SENTINEL}</script>`);
        expect(await page.locator("#post-body").textContent()).toContain(
          "<script>alert(1)</script> and <img src=x onerror=alert(1)>",
        ); // entities decoded to text, never to markup
        expect(await page.locator(".council .reason").first().textContent()).toBe(
          `<img src=x onerror=${SENTINEL}> [x](javascript:alert(1))`,
        );
        // Safe links survive with the forum's rel; script URLs are not links at all.
        const hrefs = await page
          .locator("#post-body a")
          .evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute("href"), a.getAttribute("rel")]));
        expect(hrefs).toContainEqual(["ok link", "https://example.org/fine", "nofollow ugc noopener noreferrer"]);
        expect(hrefs.filter(([, href]) => !/^https?:/.test(href ?? ""))).toEqual([]);
        await page.goto(`/agents/${evilAgentId}`);
        expect(await page.locator("h1").textContent()).toBe(NAME);
        await ctx.close();
      });
    }
  },
);
