/**
 * Static checks of deploy/docker (the image itself is built by `npm run image` and tested in
 * containers by CI's container leg, docs/design/operations.md#the-image):
 * multi-stage, non-root numeric USER, `node` entry point, production-only dependencies, and the
 * scripts the chart runs exist as service entry points that the assemble step ships.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { entryPoint, GATEWAY, SERVICES } from "@aps/platform";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const dockerfile = readFileSync(join(ROOT, "deploy/docker/Dockerfile"), "utf8");
const assemble = readFileSync(join(ROOT, "deploy/docker/assemble.sh"), "utf8");
const ignore = readFileSync(join(ROOT, "deploy/docker/Dockerfile.dockerignore"), "utf8");
const values = readFileSync(join(ROOT, "charts/aps/values.yaml"), "utf8");

describe("deploy/docker", () => {
  const stages = [...dockerfile.matchAll(/^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/gim)].map((m) => m[2]);
  const runtime = dockerfile.slice(dockerfile.search(/^FROM\s+\S+\s+AS\s+runtime/im));

  it("is multi-stage: manifests, build, and a runtime stage copying only /out and the empty data folder", () => {
    expect(stages).toEqual(["manifests", "build", "runtime"]);
    expect(runtime).not.toMatch(/^RUN\s/m);
    expect([...runtime.matchAll(/^COPY\s+(.*)$/gm)].map((m) => m[1])).toEqual([
      "--from=build --chown=0:0 /out/ /app/",
      "--from=build --chown=1000:1000 /data /data",
    ]);
    expect(runtime).toMatch(/^VOLUME \["\/data"\]$/m);
    // no `# syntax=` line: BuildKit would pull its frontend from a registry (docs/design/operations.md#the-image)
    expect(dockerfile).not.toMatch(/^#\s*syntax=/m);
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
    expect(dockerfile).toMatch(/sh deploy\/docker\/assemble\.sh \/out/);
  });

  it("runs as a numeric non-root user with node as the entry point and the gateway by default", () => {
    const user = runtime.match(/^USER\s+(\d+)(?::(\d+))?\s*$/m);
    expect(user).not.toBeNull();
    expect(Number(user![1])).toBeGreaterThan(0);
    expect(runtime).toMatch(/^ENTRYPOINT \["node"\]$/m);
    expect(runtime).toMatch(/^CMD \["services\/gateway\/dist\/main\.js"\]$/m);
    expect(runtime).toMatch(/NODE_ENV=production/);
  });

  it("keeps local build output and secrets-prone folders out of the build context", () => {
    for (const p of ["**/node_modules", "**/dist", ".git", "data"]) expect(ignore.split("\n")).toContain(p);
    expect(ignore).not.toMatch(/^docs\/?$/m); // the gateway serves docs/reference at run time
  });

  it("ships every script the chart runs, with skill.md and docs/reference", () => {
    const scripts = [...values.matchAll(/^\s+script:\s+(\S+)$/gm)].map((m) => m[1] ?? "");
    // the chart runs exactly the deployables of the one service list (docs/design/services.md#the-service-list)
    expect(scripts.sort()).toEqual([...SERVICES, GATEWAY].map((d) => entryPoint(d.name)).sort());
    for (const s of scripts) expect(existsSync(join(ROOT, s.replace(/dist\/main\.js$/, "src/main.ts")))).toBe(true);
    // assemble.sh fails the image build when an entry point of the list is missing from it
    expect(assemble).toMatch(/packages\/platform\/dist\/topology\.js/);
    expect(assemble).toMatch(/test -f "\$out\/\$e"/);
    expect(assemble).toMatch(/skill\.md/);
    expect(assemble).toMatch(/packages\/web\/web-assets/);
    expect(assemble).toMatch(/docs\/reference/);
    expect(existsSync(join(ROOT, "services/gateway/skill.md"))).toBe(true);
  });
});
