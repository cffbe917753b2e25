import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HTTP_STATUS, type Logger } from "@aps/platform";
import { createApp } from "../app.js";
import { checkDocs, DOCS_DIR, pageFiles, readManifest, renderLlmsTxt, sha256 } from "../docs.js";
import { loadSkill, SKILL_PATH } from "../skill.js";
import { routesOf } from "../http/route-list.js";

const quiet = {
  info() {},
  warn() {},
  error() {},
  debug() {},
  child() {
    return quiet;
  },
} as unknown as Logger;
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
        "concepts",
        "council",
        "editing",
        "errors",
        "limits",
        "overview",
        "proposing",
        "sagacity",
        "search",
        "translation",
        "versioning",
        "voting",
      ].sort(),
    );
  });
});

describe("GET /docs/llms.txt", () => {
  it("is an llmstxt.org index with DOCS_VERSION, the changelog, and every page file with the version it last changed in", async () => {
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
    for (const c of m.changelog) expect(text).toContain(`- DOCS_VERSION ${c.version}: ${c.changes}\n`);
    expect(lines.filter((l) => l.startsWith("# "))).toHaveLength(1);

    const links = [...text.matchAll(/^- \[([^\]]+)\]\(\/docs\/([^)]+)\.md\): (.+)$/gm)];
    expect(links.map((l) => l[2]).sort()).toEqual(pageFiles());
    expect(links.filter((l) => !l[0].includes("(/docs/"))).toHaveLength(0);
    // every list line under an H2 is a page link
    const h2 = lines.findIndex((l) => l.startsWith("## "));
    expect(h2).toBeGreaterThan(0);
    expect(lines.slice(h2).filter((l) => l.startsWith("- ")).length).toBe(links.length);
    for (const l of links) {
      const p = m.pages.find((x) => x.slug === l[2])!;
      expect(l[3]).toMatch(new RegExp(`\\(changed in DOCS_VERSION ${p.changedIn}\\)$`));
    }
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

describe("Markdown where agents look (docs/adr/0123)", () => {
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

/** `METHOD /path` named in the `### …` endpoint headings of a skill.md text. */
function headedRoutes(skill: string): string[] {
  return [...skill.matchAll(/^### .*$/gm)].flatMap((h) =>
    [...h[0].matchAll(/\b(GET|POST|PUT|PATCH|DELETE) (\/[^\s,`)]+)/g)].map((m) => `${m[1]} ${m[2]}`),
  );
}

/** Routes under /v1 (written relative to /v1) that `skill` lacks an endpoint heading or a summary-table row for. */
function undocumented(skill: string, v1: string[]): string[] {
  const headed = headedRoutes(skill);
  return v1.filter((r) => {
    const [method, path] = r.split(" ");
    const row = new RegExp(`^\\| [\\d.]+ \\| ${method} \\| \`${path!.replace(/[.{}]/g, "\\$&")}\` \\|`, "m");
    return !headed.includes(r) || !row.test(skill);
  });
}

/** Endpoint headings of `skill` that name no route of the app (`all`: full paths; `/v1` ones may be written relative). */
function unserved(skill: string, all: string[]): string[] {
  return headedRoutes(skill).filter((r) => {
    const [method, path] = r.split(" ");
    if (all.includes(r) || all.includes(`${method} /v1${path}`)) return false;
    // /docs/{slug}.md is served by the /docs/:file route
    return !(method === "GET" && path === "/docs/{slug}.md" && all.includes("GET /docs/{file}"));
  });
}

describe("skill.md documents exactly the routes the gateway serves", () => {
  const skill = readFileSync(SKILL_PATH, "utf8");
  const all = routesOf((app as unknown as { router: { stack: unknown[] } }).router.stack);
  const v1 = all.filter((r) => r.split(" ")[1]!.startsWith("/v1/")).map((r) => r.replace(" /v1/", " /"));

  it("finds the routes", () => {
    expect(v1).toEqual(
      expect.arrayContaining([
        "GET /skill.md",
        "POST /posts",
        "GET /posts/{id}/comments",
        "DELETE /admin/seats/{agentId}/{seat}",
      ]),
    );
    expect(all).toEqual(expect.arrayContaining(["GET /healthz", "GET /readyz", "GET /docs/llms.txt"]));
  });

  it("every route under /v1 has an endpoint heading and a summary row in skill.md", () => {
    expect(undocumented(skill, v1)).toEqual([]);
  });

  it("every endpoint heading in skill.md is a route the app serves", () => {
    expect(headedRoutes(skill).length).toBeGreaterThanOrEqual(v1.length);
    expect(unserved(skill, all)).toEqual([]);
  });

  it("the coverage checks fail on a skill.md that misses a route or names a route that does not exist", () => {
    const noComments = skill.replace(/^### 4\.9 GET \/posts\/\{id\}\/comments$/m, "### 4.9 Comments");
    expect(noComments).not.toBe(skill);
    const base = undocumented(skill, v1);
    expect(undocumented(noComments, v1).sort()).toEqual([...base, "GET /posts/{id}/comments"].sort());
    const noRow = skill.replace(/^\| 4\.9 \| GET \| `\/posts\/\{id\}\/comments` \|.*\n/m, "");
    expect(noRow).not.toBe(skill);
    expect(undocumented(noRow, v1).sort()).toEqual([...base, "GET /posts/{id}/comments"].sort());
    expect(unserved(`${skill}\n### 4.99 GET /posts/trending\n`, all).sort()).toEqual(
      [...unserved(skill, all), "GET /posts/trending"].sort(),
    );
  });
});
