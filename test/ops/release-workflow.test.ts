import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { validateWorkflow } from "@action-validator/core";
import YAML from "yaml";
import { ROOT } from "./chart-tools.js";

/**
 * The release workflow (`.github/workflows/release.yml`, docs/operations/install.md "Released images"): valid against the
 * GitHub workflow schema (@action-validator/core), and it does what a platform team pulls from — the
 * image from this repository's Dockerfile for amd64 and arm64 with an SBOM, pushed and then signed
 * keyless by its digest, and the chart pinned to that digest, pushed as an OCI artifact. It cannot
 * run here (no GitHub runner, no registry): this checks its text, not a release.
 */
const FILE = join(ROOT, ".github/workflows/release.yml");
const text = readFileSync(FILE, "utf8");
type Step = { uses?: string; run?: string; with?: Record<string, unknown>; env?: Record<string, string> };
const wf = YAML.parse(text) as {
  on: { push: { tags: string[] } };
  jobs: Record<string, { steps: Step[]; permissions: Record<string, string>; needs?: string }>;
};
const steps = (job: string) => wf.jobs[job]!.steps;
const using = (job: string, action: string) => steps(job).find((s) => s.uses?.startsWith(`${action}@`));

describe("the release workflow", () => {
  it("is valid against the GitHub workflow schema", () => {
    expect(validateWorkflow(text).errors).toEqual([]);
    // and the validator does refuse a broken one
    expect(validateWorkflow(text.replace("runs-on:", "runs_on:")).errors.length).toBeGreaterThan(0);
  });

  it("builds the repository's Dockerfile for amd64 and arm64 with an SBOM and provenance, on a version tag", () => {
    expect(wf.on.push.tags).toEqual(["v*.*.*"]);
    const build = using("image", "docker/build-push-action")!.with!;
    expect(existsSync(join(ROOT, String(build.file)))).toBe(true);
    expect(String(build.platforms).split(",").sort()).toEqual(["linux/amd64", "linux/arm64"]);
    expect(build).toMatchObject({ push: true, sbom: true, provenance: "mode=max" });
  });

  it("signs the pushed image keyless by its digest, then pins and pushes the chart as OCI", () => {
    expect(wf.jobs.image!.permissions["id-token"]).toBe("write");
    expect(using("image", "sigstore/cosign-installer")).toBeDefined();
    const sign = steps("image").find((s) => s.run?.includes("cosign sign"))!;
    expect(sign.run).toMatch(/cosign sign --yes "\$\{IMAGE\}@\$\{DIGEST\}"/);
    expect(sign.env!.DIGEST).toBe("${{ steps.build.outputs.digest }}");
    expect(wf.jobs.chart!.needs).toBe("image");
    const chart = steps("chart")
      .map((s) => s.run ?? "")
      .join("\n");
    expect(chart).toMatch(/\.image\.digest = \\"\$\{DIGEST\}\\"/);
    expect(chart).toMatch(/helm package charts\/aps/);
    expect(chart).toMatch(/helm push .* "oci:\/\//);
  });

  it("publishes the typed client to npm at the release's version, with provenance, after building and testing it", () => {
    expect(wf.jobs.client!.permissions["id-token"]).toBe("write");
    expect(using("client", "actions/setup-node")!.with).toMatchObject({ "registry-url": "https://registry.npmjs.org" });
    const run = steps("client")
      .map((s) => s.run ?? "")
      .join("\n");
    expect(run).toMatch(/npm version "\$\{version\}" --no-git-tag-version --workspace @aps\/client/);
    expect(run.indexOf("turbo run build --filter=@aps/client")).toBeLessThan(run.indexOf("npm publish"));
    expect(run).toMatch(/npm publish --workspace @aps\/client --provenance --access public/);
    const publish = steps("client").find((s) => s.run?.includes("npm publish"))!;
    expect(publish.env!.NODE_AUTH_TOKEN).toBe("${{ secrets.NPM_TOKEN }}");
    // what it publishes is a public package
    const pkg = JSON.parse(readFileSync(join(ROOT, "packages/client/package.json"), "utf8")) as { private?: boolean };
    expect(pkg.private).not.toBe(true);
  });
});
