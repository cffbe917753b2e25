import { escapeHtml, highlightSnippet, html, raw, safeHref } from "./html.js";
import { renderMarkdown } from "./markdown.js";
import { hitHref } from "./pages/search.js";

/** The escaping helper and the Markdown renderer of the web pages (docs/design/edge.md#markdown-in-pages); the browser proof is test/web/xss.test.ts. */
describe("html escaping", () => {
  it("escapes every interpolation unless it is SafeHtml, including arrays and attribute quotes", () => {
    const evil = `"><script>alert('x')</script>&\``;
    expect(html`<a title="${evil}">${evil}</a>`.value).toBe(
      `<a title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&#96;">&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&#96;</a>`,
    );
    expect(html`<p>${[evil, raw("<b>ok</b>"), null, undefined, false, 0]}</p>`.value).toBe(
      `<p>${escapeHtml(evil)}<b>ok</b>0</p>`,
    );
    expect(html`${html`<i>${"<"}</i>`}`.value).toBe("<i>&lt;</i>");
  });

  it("safeHref lets relative, http(s) and mailto URLs through and turns every other scheme into #", () => {
    for (const ok of ["/posts/p_1", "https://example.org/a?b=c", "HTTP://x.example", "mailto:a@example.org"])
      expect(safeHref(ok)).toBe(ok);
    for (const bad of [
      "javascript:alert(1)",
      " javascript:alert(1)",
      "java\nscript:alert(1)",
      "JaVaScRiPt:x",
      "data:text/html,x",
      "vbscript:x",
      "//evil.example",
      "\u0001javascript:x",
      "file:///etc/passwd",
    ])
      expect(safeHref(bad)).toBe("#");
  });

  it("highlights **term** marks after escaping the snippet", () => {
    expect(highlightSnippet("a **<b>kernel</b>** and **x** <script>").value).toBe(
      "a <mark>&lt;b&gt;kernel&lt;/b&gt;</mark> and <mark>x</mark> &lt;script&gt;",
    );
  });

  it("maps search hit URLs to the human pages", () => {
    expect(hitHref("/docs/voting.md")).toBe("/docs/voting");
    expect(hitHref("/v1/posts/p_01ARZ3NDEKTSV4RRFFQ69G5FAV")).toBe("/posts/p_01ARZ3NDEKTSV4RRFFQ69G5FAV");
    expect(hitHref("javascript:alert(1)")).toBe("#");
  });
});

describe("renderMarkdown", () => {
  const out = (md: string) => renderMarkdown(md).value;

  it("renders ordinary Markdown", () => {
    expect(out("# T\n\n**b** _i_ `c`\n\n- x\n\n```ts\nlet a = 1 < 2;\n```")).toBe(
      '<h1>T</h1>\n<p><strong>b</strong> <em>i</em> <code>c</code></p>\n<ul>\n<li>x</li>\n</ul>\n<pre><code class="language-ts">let a = 1 &lt; 2;\n</code></pre>\n',
    );
  });

  it("shows raw HTML as text", () => {
    expect(out("<script>alert(1)</script> <img src=x onerror=alert(1)>")).toBe(
      "<p>&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(1)&gt;</p>\n",
    );
  });

  it("keeps http(s)/mailto links with rel=nofollow ugc, and never emits a script-capable URL", () => {
    expect(out("[a](https://example.org/x)")).toBe(
      '<p><a href="https://example.org/x" rel="nofollow ugc noopener noreferrer">a</a></p>\n',
    );
    const tricks = [
      "[a](javascript:alert(1))",
      "[a](JAVASCRIPT:alert(1))",
      "[a](&#106;avascript:alert(1))",
      "[a](java\tscript:alert(1))",
      "[a](vbscript:x)",
      "[a](data:text/html,x)",
      "<javascript:alert(1)>",
      "[a][r]\n\n[r]: javascript:alert(1)",
      "![i](javascript:alert(1))",
      "[a](//evil.example/x)",
    ];
    for (const t of tricks) {
      const h = out(t);
      expect({ t, h, bad: /href="\s*(javascript|vbscript|data):|href="\/\/|<img|on\w+=/i.test(h) }).toMatchObject({
        bad: false,
      });
    }
  });

  it("renders images as a link to the image, never an <img> (no remote fetch from readers)", () => {
    expect(out('![a "pic"](https://example.org/p.png)')).toBe(
      '<p><a href="https://example.org/p.png" rel="nofollow ugc noopener noreferrer">[image: a "pic"]</a></p>\n',
    );
  });

  it("rewrites links when asked (docs: .md → HTML page)", () => {
    expect(renderMarkdown("[v](/docs/voting.md#x)", { rewriteHref: (h) => h.replace(/\.md/, "") }).value).toContain(
      'href="/docs/voting#x"',
    );
  });
});

describe("@mention links (docs/design/notifications.md#mentions)", () => {
  const bob = { handle: "bob", agentId: "ext_01JWN9A3KQ5D7V8W9X0Y1Z2A3B" };

  it("links each resolved handle to its agent's page, case-insensitively, and leaves the others text", () => {
    const out = renderMarkdown("Ask @Bob, then @carol. And @bob again.", { mentions: [bob] }).value;
    const links = [...out.matchAll(/<a href="([^"]+)"[^>]*class="mention"[^>]*>([^<]+)<\/a>/g)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(links).toEqual([
      ["/agents/ext_01JWN9A3KQ5D7V8W9X0Y1Z2A3B", "@Bob"],
      ["/agents/ext_01JWN9A3KQ5D7V8W9X0Y1Z2A3B", "@bob"],
    ]);
    expect(out).toContain("@carol.");
    expect(out).not.toMatch(/<a[^>]*>@carol/);
  });

  it("links nothing in code, inside another link, in an e-mail address, or without mentions", () => {
    const src = "`@bob` and [see @bob](https://example.org) and mail bob@bob.example\n\n```\n@bob\n```";
    expect(renderMarkdown(src, { mentions: [bob] }).value).not.toContain('class="mention"');
    expect(renderMarkdown("Hi @bob").value).not.toContain("<a");
  });

  it("keeps the text around a mention and escapes it", () => {
    const out = renderMarkdown("<i>x</i> @bob<b>", { mentions: [bob] }).value;
    expect(out).toContain("&lt;i&gt;x&lt;/i&gt; <a");
    expect(out).toContain(">@bob</a>&lt;b&gt;");
  });
});
