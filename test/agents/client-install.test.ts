import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { ROOT, startSystem, type System } from "../support/system.js";

/**
 * `@aps/client` as an agent's project gets it (docs/design/agents.md#typed-client): `npm pack` of the
 * workspace package (its `prepack` builds `dist/`; here the suite's build did) must hold the built code and its types and no
 * workspace-only dependency; the tarball is installed with `npm install --offline` into a new
 * project in the OS temp folder, outside the workspace (its runtime dependencies packed from the
 * workspace's node_modules, so no registry is needed), and a TypeScript file there — checked by the
 * workspace's `tsc` against the installed types only, then run — joins, proposes and reads back
 * against a running server. Before this, the tarball had no `dist/` and the import failed.
 * The tarball installed is the one the server serves at `GET /client/<file>`, found from the
 * `client` link of `GET /v1` and checked against its integrity (docs/reference/client.md).
 */
const run = promisify(execFile);
const CLIENT = join(ROOT, "packages/client");
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");
const requireFromClient = createRequire(join(CLIENT, "package.json"));

/** Packs the installed package `name` (resolved from packages/client) into `dest`; returns the tarball path. */
async function packDependency(name: string, from: NodeJS.Require, dest: string): Promise<string[]> {
  const dir = dirname(from.resolve(`${name}/package.json`));
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
  const { stdout } = await run("npm", ["pack", dir, "--pack-destination", dest, "--json", "--ignore-scripts"], {
    cwd: dest,
  });
  const own = join(dest, (JSON.parse(stdout) as { filename: string }[])[0]!.filename);
  const nested = await Promise.all(
    Object.keys(pkg.dependencies ?? {}).map((d) => packDependency(d, createRequire(join(dir, "package.json")), dest)),
  );
  return [own, ...nested.flat()];
}

describe("@aps/client installed from its tarball (embedded)", () => {
  let sys: System;
  let dir: string;
  let tarball: string;
  /** Where the tarball the server serves is saved (the first test downloads it). */
  let served: string;
  let packed: { files: { path: string }[] };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "aps-client-install-"));
    const [system, pack] = await Promise.all([
      startSystem("embedded"),
      // --ignore-scripts: `prepack` would rebuild packages/client/dist while other suites import it;
      // the suite runs after the build, so dist/ is current (the test below checks prepack builds it).
      run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir, "--json"], {
        cwd: CLIENT,
        maxBuffer: 16 << 20,
      }),
    ]);
    sys = system;
    packed = (JSON.parse(pack.stdout) as (typeof packed & { filename: string })[])[0]!;
    tarball = join(dir, (packed as unknown as { filename: string }).filename);
    // the tarball as an agent gets it: the client link of GET /v1, downloaded from the server
    const index = (await (await fetch(sys.baseUrl)).json()) as { links: { client?: { href: string } } };
    const href = index.links.client?.href ?? "";
    await run("mkdir", ["-p", join(dir, "served")]);
    served = join(dir, "served", href.split("/").pop() || "missing.tgz");
    const download = await fetch(`${sys.baseUrl.replace(/\/v1$/, "")}${href}`);
    if (download.ok) writeFileSync(served, Buffer.from(await download.arrayBuffer()));
  });
  afterAll(async () => {
    await sys?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("packs the built code, its types, a README and a license, and no workspace-only dependency", async () => {
    const files = packed.files.map((f) => f.path).sort();
    for (const f of ["dist/index.js", "dist/index.d.ts", "dist/client.js", "dist/client.d.ts", "dist/gen/openapi.d.ts"])
      expect(files).toContain(f);
    expect(files).toEqual(expect.arrayContaining(["README.md", "LICENSE", "package.json"]));
    expect(files.filter((f) => f.startsWith("src/") || f.endsWith(".test.js") || f.endsWith(".map"))).toEqual([]);
    const { stdout } = await run("tar", ["-xzOf", tarball, "package/package.json"]);
    const manifest = JSON.parse(stdout) as Record<string, any>;
    expect(manifest.private).not.toBe(true);
    expect(manifest.scripts?.prepack).toMatch(/\btsc -p tsconfig\.json\b/); // a fresh checkout packs a built dist/
    expect(manifest).toMatchObject({
      license: expect.any(String),
      repository: expect.anything(),
      types: "./dist/index.d.ts",
    });
    expect(manifest.publishConfig).toMatchObject({ access: "public" });
    const runtime = { ...manifest.dependencies, ...manifest.peerDependencies, ...manifest.optionalDependencies };
    expect(
      Object.entries(runtime).filter(([n, v]) => n.startsWith("@aps/") || /^(workspace|file|link):/.test(String(v))),
    ).toEqual([]);
  });

  it("the server serves the same package at the link GET /v1 gives, with its integrity, ETag and digest", async () => {
    const index = (await (await fetch(sys.baseUrl)).json()) as { links: Record<string, any> };
    const link = index.links.client as { href: string; version: string; integrity: string };
    expect(link.href).toMatch(/^\/client\/aps-client-[0-9.]+\.tgz$/);
    expect(link.version).toBe(JSON.parse(readFileSync(join(CLIENT, "package.json"), "utf8")).version);
    const origin = sys.baseUrl.replace(/\/v1$/, "");
    const r = await fetch(`${origin}${link.href}`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/gzip");
    const bytes = Buffer.from(await r.arrayBuffer());
    const sha512 = createHash("sha512").update(bytes).digest("base64");
    expect(link.integrity).toBe(`sha512-${sha512}`);
    expect(r.headers.get("repr-digest")).toBe(`sha-512=:${sha512}:`);
    const etag = r.headers.get("etag")!;
    expect(etag).toBe(`"${createHash("sha256").update(bytes).digest("base64url")}"`);
    expect((await fetch(`${origin}${link.href}`, { headers: { "if-none-match": etag } })).status).toBe(304);
    expect((await fetch(`${origin}/client/aps-client-9.9.9.tgz`)).status).toBe(404);
    expect(bytes.equals(readFileSync(served))).toBe(true); // what beforeAll downloaded for the install below
    // the same files as npm pack of the workspace package
    const list = async (file: string) => (await run("tar", ["-tzf", file])).stdout.split("\n").filter(Boolean).sort();
    expect(await list(served)).toEqual(await list(tarball));
  });

  it("installs into a project outside the workspace and makes typed calls: join, propose, read", async () => {
    const project = join(dir, "agent");
    await run("mkdir", ["-p", project]);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "agent", private: true, type: "module" }));
    const deps = (
      await Promise.all(
        Object.keys(JSON.parse(readFileSync(join(CLIENT, "package.json"), "utf8")).dependencies as object).map((d) =>
          packDependency(d, requireFromClient, dir),
        ),
      )
    ).flat();
    // the tarball as an agent downloads it from the server (`npm install <server>/client/<file>`)
    await run("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", served, ...deps], {
      cwd: project,
    });

    // What an agent writes: only the package's own exports and its generated types.
    writeFileSync(
      join(project, "main.ts"),
      `import { ApiError, createApsClient, unwrap, type Schemas } from "@aps/client";

const baseUrl = ${JSON.stringify(sys.baseUrl)};
const anonymous = createApsClient({ baseUrl });
const joined = await unwrap(anonymous.POST("/v1/join", { body: { name: "installed client" } }));
const me = createApsClient({ baseUrl, token: joined.apiKey });
const post: Schemas["Post"] = await unwrap(
  me.POST("/v1/posts", { body: { title: "From the tarball", body: "Typed all the way.", is_arch_design: true } }),
);
const read = await unwrap(anonymous.GET("/v1/posts/{id}", { params: { path: { id: post.id } } }));
let refused = 0;
try {
  await unwrap(anonymous.POST("/v1/posts", { body: { title: "no key", body: "x", is_arch_design: false } }));
} catch (err) {
  if (err instanceof ApiError) refused = err.status;
}
console.log(JSON.stringify({ agentId: joined.agentId, id: post.id, title: read.title, author: read.author?.agentId, status: read.status, refused }));
`,
    );
    // Calls the document does not have must not type-check: proves the types are real, not `any`.
    writeFileSync(
      join(project, "wrong.ts"),
      `import { createApsClient } from "@aps/client";
const c = createApsClient({ baseUrl: "http://localhost:8080/v1" });
// @ts-expect-error an unknown path
void c.GET("/v1/no-such-route");
// @ts-expect-error a body field of the wrong type
void c.POST("/v1/posts", { body: { title: 1, body: "b", is_arch_design: true } });
`,
    );
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          lib: ["ES2023", "DOM"],
          types: [],
          strict: true,
          skipLibCheck: false,
          outDir: "out",
        },
        files: ["main.ts", "wrong.ts"],
      }),
    );
    const tsc = await run(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: project }).catch(
      (err: { stdout?: string; message: string }) => ({ stdout: `tsc failed: ${err.stdout || err.message}` }),
    );
    expect(tsc.stdout).toBe("");

    const { stdout } = await run(process.execPath, ["out/main.js"], { cwd: project });
    const out = JSON.parse(stdout) as Record<string, unknown>;
    expect(out).toMatchObject({ title: "From the tarball", author: out.agentId, status: "open", refused: 401 });
    expect(out.id).toMatch(/^p_/);
  });
});
