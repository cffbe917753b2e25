import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, HTTP_STATUS } from "@aps/platform";
import { createApp } from "../app.js";
import { renderLlmsTxt } from "@aps/api/meta/llms-txt";
import { checkDocs, DOCS_DIR, pageFiles, readManifest, sha256 } from "../docs.js";
import { loadSkill, SKILL_PATH } from "../skill.js";
import { BLOCK_END, blockStart } from "../skill-blocks.js";
import { routesOf } from "../http/route-list.js";

/** A real logger that writes nothing (the app asks it which levels are on). */
const quiet = createLogger("gateway-test", "silent");
/** The gateway app with clients that are never called by these tests (docs and routing only). */
const app = createApp({
  identity: {} as never,
  forum: {} as never,
  council: {} as never,
  skill: loadSkill(),
  log: quiet,
  adminToken: "t",
});

let server: Server;
let origin: string;
beforeAll(async () => {
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(origin + path, { headers });
const page = (slug: string) => readFileSync(join(DOCS_DIR, `${slug}.md`), "utf8");

describe("docs manifest (docs/reference/index.json)", () => {
  it("records every page's current SHA-256, a changelog entry per DOCS_VERSION, and nothing stale", () => {
    // Fails when a page's text changed but its recorded version and hash did not.
    expect(checkDocs()).toEqual([]);
  });

  it("the check fails when a page is edited without a new version, and passes once the version is bumped", () => {
    const dir = mkdtempSync(join(tmpdir(), "aps-docs-"));
    try {
      cpSync(DOCS_DIR, dir, { recursive: true });
      expect(checkDocs(dir)).toEqual([]);
      writeFileSync(join(dir, "voting.md"), `${page("voting")}\nOne more sentence.\n`);
      const problems = checkDocs(dir);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^voting\.md changed/);

      // Hash updated but version not bumped: the hash check passes, but no page records the
      // new version only once docsVersion is raised; raising docsVersion without a changelog fails.
      const m = readManifest(dir);
      const v = m.pages.find((p) => p.slug === "voting")!;
      v.sha256 = sha256(readFileSync(join(dir, "voting.md"), "utf8"));
      m.docsVersion += 1;
      writeFileSync(join(dir, "index.json"), JSON.stringify(m));
      expect(checkDocs(dir).join("\n")).toMatch(/changelog must have one non-empty entry/);
      expect(checkDocs(dir).join("\n")).toMatch(
        new RegExp(`no page records a change in DOCS_VERSION ${m.docsVersion}\\b`),
      );

      v.changedIn = m.docsVersion;
      m.changelog.push({ version: m.docsVersion, changes: "voting: one more sentence" });
      writeFileSync(join(dir, "index.json"), JSON.stringify(m));
      expect(checkDocs(dir)).toEqual([]);
      expect(renderLlmsTxt(m)).toMatch(
        new RegExp(`\\[Voting\\]\\(/docs/voting\\.md\\): .*\\(changed in DOCS_VERSION ${m.docsVersion}\\)`),
      );

      // A page file that the manifest does not list, and a listed page that is gone.
      writeFileSync(join(dir, "extra.md"), "# Extra\n");
      rmSync(join(dir, "search.md"));
      expect(checkDocs(dir)).toEqual(
        expect.arrayContaining([
          "extra.md is not listed in index.json",
          expect.stringMatching(/^search: listed in index.json but search\.md does not exist/),
        ]),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("has the pages the knowledge issue asks for", () => {
    expect(pageFiles()).toEqual(
      [
        "client",
        "concepts",
        "council",
        "endpoints",
        "editing",
        "errors",
        "events",
        "heartbeat",
        "http",
        "lifecycle",
        "limits",
        "mcp",
        "moderation-and-council-depth",
        "overview",
        "owners",
        "proposing",
        "sagacity",
        "sandbox",
        "search",
        "translation",
        "versioning",
        "voting",
      ].sort(),
    );
  });
});

describe("GET /docs/llms.txt", () => {
  it("is an llmstxt.org index with DOCS_VERSION and every page file with the version it last changed in, Start here first", async () => {
    const res = await get("/docs/llms.txt");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; charset=utf-8/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    const text = await res.text();
    const m = readManifest();
    const lines = text.split("\n");
    expect(lines[0]).toBe("# APS");
    expect(lines[1]).toBe("");
    expect(lines[2]).toMatch(/^> \S/);
    expect(text).toContain(`\nDOCS_VERSION: ${m.docsVersion}\n`);
    // the typed client is named where a new agent looks first (docs/design/agents.md#typed-client)
    expect(text).toMatch(/^Typed client: @aps\/client .*`client` link of `GET \/v1`.*\/docs\/client\.md\.$/m);
    expect(lines.filter((l) => l.startsWith("# "))).toHaveLength(1);

    const links = [...text.matchAll(/^- \[([^\]]+)\]\(\/docs\/([^)]+)\.md\): (.+)$/gm)];
    const pageLinks = links.filter((l) => l[2] !== "changelog");
    expect(pageLinks.map((l) => l[2]).sort()).toEqual(pageFiles());
    // every list line under an H2 is a link: the pages, then the changelog under Optional
    const h2 = lines.findIndex((l) => l.startsWith("## "));
    expect(lines[h2]).toBe("## Start here");
    expect(lines.slice(h2).filter((l) => l.startsWith("- ")).length).toBe(links.length);
    for (const l of pageLinks) {
      const p = m.pages.find((x) => x.slug === l[2])!;
      expect(l[3]).toMatch(new RegExp(`\\(changed in DOCS_VERSION ${p.changedIn}\\)$`));
    }
    // the history is one link at the end, not the first screen: Start here within the first 2 KB
    expect(text.indexOf("## Start here")).toBeLessThan(2048);
    expect(lines.slice(-4)).toEqual(["## Optional", "", expect.stringMatching(/^- \[Changelog\]/), ""]);
    expect(lines.at(-2)).toMatch(/^- \[Changelog\]\(\/docs\/changelog\.md\): /);
    expect(text).not.toContain(`- DOCS_VERSION 1: `);
  });

  it("links a changelog page with one entry per DOCS_VERSION, newest first", async () => {
    const res = await get("/docs/changelog.md");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    const text = await res.text();
    const m = readManifest();
    const entries = [...text.matchAll(/^- DOCS_VERSION (\d+): (.+)$/gm)];
    expect(entries.map((e) => Number(e[1]))).toEqual(m.changelog.map((c) => c.version).sort((a, b) => b - a));
    for (const c of m.changelog) expect(text).toContain(`- DOCS_VERSION ${c.version}: ${c.changes}\n`);
  });

  it("answers 304 to a matching If-None-Match", async () => {
    const first = await get("/docs/llms.txt");
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    const again = await get("/docs/llms.txt", { "If-None-Match": etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
  });
});

describe("GET /docs/<slug>.md", () => {
  it.each(pageFiles())("serves %s.md verbatim with a strong content ETag, 304 on If-None-Match", async (slug) => {
    const want = page(slug);
    const res = await get(`/docs/${slug}.md`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(await res.text()).toBe(want);
    const etag = res.headers.get("etag");
    expect(etag).toBe(`"${sha256(want)}"`);

    const same = await get(`/docs/${slug}.md`, { "If-None-Match": etag! });
    expect(same.status).toBe(304);
    expect(same.headers.get("etag")).toBe(etag);
    expect(same.headers.get("cache-control")).toBe("no-store");
    expect(await same.text()).toBe("");
    // a list with a weak form of the tag matches too (If-None-Match uses weak comparison)
    expect((await get(`/docs/${slug}.md`, { "If-None-Match": `"nope", W/${etag}` })).status).toBe(304);
    // a stale tag gets the page
    const stale = await get(`/docs/${slug}.md`, { "If-None-Match": `"${"0".repeat(64)}"` });
    expect(stale.status).toBe(200);
    expect(await stale.text()).toBe(want);
  });

  it.each([
    "/docs/nope.md",
    "/docs/index.json",
    "/docs/nope",
    "/docs/Overview.md",
    "/docs/..%2Fpackage.json",
    "/docs/a/b.md",
  ])("%s → 404 problem+json", async (path) => {
    const res = await get(path);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = (await res.json()) as { code: string; type: string };
    expect(body.code).toBe("not_found");
    expect(body.type).toBe("/docs/errors.md#not_found");
  });
});

describe("Markdown where agents look (docs/design/agents.md#discovery)", () => {
  it("serves /llms.txt at the site root: the same index as /docs/llms.txt, with its ETag", async () => {
    const root = await get("/llms.txt", { Accept: "text/html" });
    const docs = await get("/docs/llms.txt");
    expect(root.status).toBe(200);
    expect(root.headers.get("content-type")).toMatch(/^text\/plain; charset=utf-8/);
    expect(root.headers.get("etag")).toBe(docs.headers.get("etag"));
    expect(await root.text()).toBe(await docs.text());
    expect((await get("/llms.txt", { "If-None-Match": root.headers.get("etag")! })).status).toBe(304);
  });

  it.each([undefined, "*/*", "text/markdown", "application/json", "text/plain"])(
    "answers /docs, /docs/ and /docs/<slug> with Markdown to Accept %s",
    async (accept) => {
      const headers: Record<string, string> = accept ? { Accept: accept } : {};
      const llms = await (await get("/docs/llms.txt")).text();
      for (const path of ["/docs", "/docs/"]) {
        const index = await get(path, headers);
        expect(index.status).toBe(200);
        expect(index.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
        expect(index.headers.get("vary")).toMatch(/Accept/);
        expect(await index.text()).toBe(llms);
      }
      const res = await get("/docs/overview", headers);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
      expect(res.headers.get("vary")).toMatch(/Accept/);
      expect(await res.text()).toBe(page("overview"));
      const skill = await get("/docs/skill", headers);
      expect(skill.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
      expect((await skill.text()).split("\n")[0]).toMatch(/^SKILL_VERSION: \d+$/);
    },
  );

  it("keeps HTML for browsers", async () => {
    const accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    for (const path of ["/docs", "/docs/overview", "/docs/skill"]) {
      const res = await get(path, { Accept: accept });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      expect(res.headers.get("vary")).toMatch(/Accept/);
    }
  });
});

describe("errors.md", () => {
  it("has one `## <code>` section for every stable error code, and no other", () => {
    const headings = [...page("errors").matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings.sort()).toEqual(Object.keys(HTTP_STATUS).sort());
    for (const [code, status] of Object.entries(HTTP_STATUS)) {
      expect(page("errors")).toMatch(new RegExp(`^## ${code}\\n\\nHTTP ${status} `, "m"));
    }
  });

  it("is where a problem's type points", async () => {
    const res = await get("/v1/no-such-route");
    const body = (await res.json()) as { type: string; code: string };
    const [path, anchor] = body.type.split("#");
    expect(anchor).toBe(body.code);
    expect((await get(path!)).status).toBe(200);
    expect(page("errors")).toContain(`\n## ${anchor}\n`);
  });
});

/** `METHOD /path` (relative to /v1) of the generated endpoint block of a skill.md text: its table rows. */
function listedRoutes(skill: string): string[] {
  const start = skill.indexOf(blockStart("endpoints"));
  const block = start < 0 ? "" : skill.slice(start, skill.indexOf(BLOCK_END, start));
  return [...block.matchAll(/^\| (GET|POST|PUT|PATCH|DELETE) \| `([^`]+)` \|/gm)].map((m) => `${m[1]} ${m[2]}`);
}

/** `METHOD /path` of every `## METHOD /path` section of the endpoints page. */
function pageRoutes(page: string): string[] {
  return [...page.matchAll(/^## (GET|POST|PUT|PATCH|DELETE) (\/\S*)$/gm)].map((m) => `${m[1]} ${m[2]}`);
}

describe("skill.md lists exactly the routes the gateway serves (docs/design/agents.md#skillmd-core-and-generated-blocks)", () => {
  const skill = readFileSync(SKILL_PATH, "utf8");
  const all = routesOf((app as unknown as { router: { stack: unknown[] } }).router.stack);
  // `/v1` itself (the index, docs/design/edge.md#index-405-and-404) is listed as `/v1`, every other path relative to it.
  const v1 = [...new Set(all.filter((r) => /^\/v1(\/|$)/.test(r.split(" ")[1]!)).map((r) => r.replace(" /v1/", " /")))];

  it("finds the routes", () => {
    expect(v1).toEqual(
      expect.arrayContaining([
        "GET /skill.md",
        "POST /posts",
        "GET /posts/{id}/comments",
        "DELETE /admin/seats/{agentId}/{seat}",
      ]),
    );
    expect(all).toEqual(expect.arrayContaining(["GET /healthz", "GET /readyz", "GET /docs/llms.txt", "GET /docs/api"]));
  });

  it("every agent's route under /v1 is in skill.md's endpoint list, every owner's and sandbox's route on the endpoints page, and every listed route is served", () => {
    const listed = listedRoutes(skill);
    const isOwner = (r: string) => r.split(" ")[1]!.startsWith("/admin/");
    // the sandbox's routes (docs/design/agents.md#sandbox) are counted in one line and described on the sandbox page
    const isSandbox = (r: string) => /^\/(sandbox|test)\//.test(r.split(" ")[1]!);
    expect(v1.filter((r) => !isOwner(r) && !isSandbox(r) && !listed.includes(r))).toEqual([]);
    expect(listed.filter((r) => !v1.includes(r) || isOwner(r) || isSandbox(r))).toEqual([]);
    const sandbox = v1.filter(isSandbox);
    expect(sandbox.length).toBeGreaterThan(0);
    expect(sandbox.filter((r) => !pageRoutes(readFileSync(`${DOCS_DIR}/endpoints.md`, "utf8")).includes(r))).toEqual(
      [],
    );
    expect(skill).toContain(`The sandbox's ${sandbox.length} operations`);
    expect(new Set(listed).size).toBe(listed.length);
    // the owner's operations are named by count and found on the endpoints page
    const page = pageRoutes(readFileSync(`${DOCS_DIR}/endpoints.md`, "utf8"));
    const owners = v1.filter(isOwner);
    expect(owners.length).toBeGreaterThan(10);
    expect(owners.filter((r) => !page.includes(r))).toEqual([]);
    expect(skill).toContain(`The platform owner's ${owners.length} operations under \`/admin\``);
  });

  it("the check fails on a skill.md whose list misses a route", () => {
    const row = /^\| GET \| `\/posts\/\{id\}\/comments` \|.*\n/m;
    const noRow = skill.replace(row, "");
    expect(noRow).not.toBe(skill);
    expect(listedRoutes(noRow)).not.toContain("GET /posts/{id}/comments");
    expect(listedRoutes(skill)).toContain("GET /posts/{id}/comments");
  });

  it("every /docs page skill.md links to exists", () => {
    const links = [...skill.matchAll(/\]\(\/docs\/([a-z0-9-]+)\.md(?:#[^)]*)?\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(5);
    // `/docs/changelog.md` is rendered from index.json's changelog, not a page file
    const served = [...pageFiles(), "changelog"];
    expect(links.filter((slug) => !served.includes(slug))).toEqual([]);
  });
});

describe("skill.md is short (the core under 20 KB)", () => {
  it("GET /v1/skill.md serves at most 20 KiB", async () => {
    const res = await get("/v1/skill.md");
    expect(res.status).toBe(200);
    const bytes = Buffer.byteLength(await res.text(), "utf8");
    console.log(`[skill.md] served core: ${bytes} bytes (limit 20480)`);
    expect(bytes).toBeLessThanOrEqual(20 * 1024);
  });

  it("keeps the sections agents need: quick start, untrusted content, retries by code, /capabilities first", () => {
    const skill = readFileSync(SKILL_PATH, "utf8");
    for (const h of [
      "Quick start",
      "Untrusted content",
      "Errors and retries",
      "Endpoints",
      "Limits",
      "Events",
      "Versioning",
    ])
      expect(skill).toMatch(new RegExp(`^## ${h}`, "m"));
    const quick = skill.slice(
      skill.indexOf("## Quick start"),
      skill.indexOf("\n## ", skill.indexOf("## Quick start") + 3),
    );
    expect(quick.split("\n").filter((l) => /^\d+\. /.test(l))).toHaveLength(10);
    expect(skill).toMatch(/GET \{base_url\}\/capabilities` — \*\*read it first\*\*/);
    expect(skill).toMatch(/never follow instructions/i);
    expect(skill).toMatch(/Send your API key only to this host/);
    // one row per stable problem code in the retry table, and no other
    const retry = skill.slice(skill.indexOf("## Errors and retries"), skill.indexOf("## Endpoints"));
    const codes = [...retry.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
    expect(Object.fromEntries(codes)).toEqual(HTTP_STATUS);
    expect(codes).toHaveLength(Object.keys(HTTP_STATUS).length);
  });
});

describe("GET /docs/api (docs/design/edge.md#api-reference-page)", () => {
  it("serves the API reference page with its own CSP and the Scalar bundle from this host", async () => {
    const res = await get("/docs/api", { Accept: "text/html" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("connect-src 'self';");
    expect(csp).not.toMatch(/unsafe-eval|https?:/);
    expect(csp.match(/unsafe-inline/g)).toHaveLength(1); // styles only
    expect(csp).toMatch(/style-src 'self' 'unsafe-inline'/);
    const page = await res.text();
    expect(page).toContain('data-url="/v1/openapi.json"');
    // no inline script: the bundle by src, and the empty element that carries Scalar's settings
    const scripts = [...page.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(2);
    for (const m of scripts) {
      expect(m[1]).toMatch(/\bsrc="|\bid="api-reference"/);
      expect(m[2]).toBe("");
    }
    expect(page).not.toMatch(/https?:\/\//);
    const src = /<script src="([^"]+)"><\/script>/.exec(page)![1]!;
    expect(src).toMatch(/^\/docs\/api\/scalar\.[0-9a-f]{12}\.js$/);
    const script = await get(src);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(script.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const body = await script.text();
    expect(body.length).toBeGreaterThan(100_000);
    expect(body).toContain("createApiReference");
    // the rest of the site keeps its stricter policy
    expect((await get("/docs", { Accept: "text/html" })).headers.get("content-security-policy")).not.toMatch(
      /unsafe-inline/,
    );
  });
});

describe("GET /v1/heartbeat.md (docs/design/agents.md#check-in-guide-heartbeatmd)", () => {
  it("serves the check-in guide as Markdown with a strong ETag, 304 to it, linked from GET /v1, skill.md and llms.txt", async () => {
    const res = await get("/v1/heartbeat.md");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/markdown/);
    const text = await res.text();
    expect(text).toBe(page("heartbeat"));
    // The guide says how often (with jitter), what to do each time, and how to back off.
    for (const needle of ["jitter", "Retry-After", "429", "503", "/v1/me/notifications", "/v1/agenda"])
      expect({ needle, found: text.includes(needle) }).toEqual({ needle, found: true });
    const etag = res.headers.get("etag");
    expect(etag).toBe(`"${sha256(text)}"`);
    expect((await get("/v1/heartbeat.md", { "if-none-match": etag! })).status).toBe(304);
    const index = (await (await get("/v1")).json()) as { links: Record<string, { href: string }> };
    expect(index.links.heartbeat?.href).toBe("/v1/heartbeat.md");
    expect(loadSkill().markdown).toContain("(/v1/heartbeat.md)");
    expect(await (await get("/llms.txt")).text()).toContain("(/docs/heartbeat.md)");
  });
});
