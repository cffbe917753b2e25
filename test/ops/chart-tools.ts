import { execFile, execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { hasPostgres } from "@aps/testkit";

/**
 * helm and the chart suites' npm tools (kubernetes-models, the Prometheus Operator's models, yaml),
 * fetched by scripts/helm.mjs into node_modules/.cache/aps-helm, for the chart suites under test/ops.
 */
const run = promisify(execFile);
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const CHART = join(ROOT, "charts/aps");
export const PROD_VALUES = join(CHART, "values-production.yaml");

/** A rendered Kubernetes object (the fields the chart suites read). */
export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
  [k: string]: unknown;
};

/** helm's path, `require` from the tools folder, and the Prometheus Operator's models by kind. */
export type Tools = { helm: string; requireTool: NodeRequire; operatorModels: Record<string, any> };
/** The tools, or why they are missing (`{ skipReason }`). */
export type ChartTools = Tools | { skipReason: string };

/**
 * Installs (first call) and finds helm and the tools. A failed install throws — unless
 * APS_SKIP_HELM=1 and not APS_TEST_REQUIRE_REAL=1, which returns the reason, for a suite that
 * skips loudly with it in its name (docs/design/tests.md#loud-skips).
 */
export async function chartTools(): Promise<ChartTools> {
  const opts = { cwd: ROOT, encoding: "utf8" as const, stdio: ["ignore", "pipe", "pipe"] as any, timeout: 600_000 };
  const last = (out: string) => out.trim().split("\n").pop()!.trim();
  try {
    const helm = last(execFileSync(process.execPath, [join(ROOT, "scripts/helm.mjs")], opts));
    const toolsDir = last(execFileSync(process.execPath, [join(ROOT, "scripts/helm.mjs"), "--tools"], opts));
    // ESM only: imported, not required
    const operator = join(
      toolsDir,
      "node_modules/@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/index.js",
    );
    const operatorModels = (await import(pathToFileURL(operator).href)) as Record<string, any>;
    return { helm, requireTool: createRequire(join(toolsDir, "package.json")), operatorModels };
  } catch (err: any) {
    const msg = `helm could not be installed: ${err?.stderr || err?.message || err}`;
    if (process.env.APS_SKIP_HELM === "1" && process.env.APS_TEST_REQUIRE_REAL !== "1") return { skipReason: msg };
    throw new Error(msg, { cause: err });
  }
}

/**
 * Validates `m` against the schema of its apiVersion/kind: kubernetes-models for Kubernetes' own
 * kinds, @kubernetes-models/prometheus-operator for monitoring.coreos.com/v1. Throws naming the
 * object and the first violation, or that no schema exists for its kind.
 */
export function validateManifest(tools: Tools, m: Manifest): void {
  let Model: any;
  if (m.apiVersion === "monitoring.coreos.com/v1") Model = tools.operatorModels[m.kind];
  else
    try {
      Model = tools.requireTool(`kubernetes-models/${m.apiVersion}/${m.kind}`)[m.kind];
    } catch {
      Model = undefined;
    }
  if (!Model) throw new Error(`${m.kind} ${m.metadata?.name}: no Kubernetes schema for ${m.apiVersion}/${m.kind}`);
  try {
    new Model(m).validate();
  } catch (err: any) {
    throw new Error(`${m.kind} ${m.metadata?.name} is not a valid ${m.apiVersion}/${m.kind}: ${err.message}`, {
      cause: err,
    });
  }
}

/**
 * `helm template aps charts/aps --namespace aps <args>`, parsed into manifests (empty documents
 * dropped), each validated (validateManifest). Rejects with helm's stderr when the render fails.
 */
export async function renderChart(tools: Tools, args: string[] = []): Promise<Manifest[]> {
  const { stdout } = await run(tools.helm, ["template", "aps", CHART, "--namespace", "aps", ...args], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  const YAML = tools.requireTool("yaml");
  const ms = YAML.parseAllDocuments(stdout)
    .map((d: any) => d.toJSON())
    .filter(Boolean) as Manifest[];
  for (const m of ms) validateManifest(tools, m);
  return ms;
}

/** The stderr of `helm template … <args>`, which must fail; throws when it renders. */
export async function renderChartError(tools: Tools, args: string[]): Promise<string> {
  try {
    await run(tools.helm, ["template", "aps", CHART, "--namespace", "aps", ...args], { cwd: ROOT });
  } catch (err: any) {
    return String(err.stderr ?? err.message);
  }
  throw new Error(`helm template ${args.join(" ")} rendered, but should have failed`);
}

/** Debian's promtool (package `prometheus`; .ci/run installs it), or undefined when absent. */
export const PROMTOOL = ["/usr/bin/promtool", "/usr/local/bin/promtool"].find((p) => existsSync(p));

/**
 * Why a suite that needs helm's tools and promtool cannot run, or undefined when it can. Throws
 * under APS_TEST_REQUIRE_REAL=1 (CI) instead; otherwise warns that `suite` is skipped (docs/design/tests.md#loud-skips).
 */
export function promtoolMissing(tools: ChartTools, suite: string): string | undefined {
  const missing =
    "skipReason" in tools
      ? tools.skipReason
      : PROMTOOL
        ? undefined
        : "promtool not found (Debian package `prometheus`)";
  if (missing && process.env.APS_TEST_REQUIRE_REAL === "1")
    throw new Error(`${missing}: required under APS_TEST_REQUIRE_REAL=1`);
  if (missing) console.warn(`SKIPPING ${suite}: ${missing}`);
  return missing;
}

/**
 * Why a suite that needs helm's tools and the real PostgreSQL cannot run, or undefined when it can;
 * throws under APS_TEST_REQUIRE_REAL=1, otherwise warns that `suite` is skipped (as promtoolMissing).
 */
export async function postgresMissing(tools: ChartTools, suite: string): Promise<string | undefined> {
  const missing = "skipReason" in tools ? tools.skipReason : (await hasPostgres()) ? undefined : "no real PostgreSQL";
  if (missing && process.env.APS_TEST_REQUIRE_REAL === "1")
    throw new Error(`${missing}: required under APS_TEST_REQUIRE_REAL=1`);
  if (missing) console.warn(`SKIPPING ${suite}: ${missing}`);
  return missing;
}
