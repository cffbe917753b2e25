/**
 * Which container images the tests run, and the Docker CLI (docs/design/operations.md#the-image). Kept apart from
 * containers.ts, which loads testcontainers: every test file reads this while declaring its
 * suites, and only the container suites pay for loading testcontainers (about 0.7 s per
 * test file, as jest loads modules anew in each file).
 */
import { execFile, spawnSync } from "node:child_process";
import { promisify } from "node:util";

/** The images the container tests run. */
export interface ContainerImages {
  /** The APS image (`npm run image`). */
  aps: string;
  /** PostgreSQL from Debian's package (deploy/docker/base/postgres.Dockerfile). */
  postgres: string;
  /** NATS JetStream from Debian's package (deploy/docker/base/nats.Dockerfile). */
  nats: string;
}

/** Whether a test must fail (not skip) when Docker or the images are missing: `APS_TEST_REQUIRE_DOCKER=1`. */
export function dockerRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.APS_TEST_REQUIRE_DOCKER === "1";
}

/**
 * The container images to test, or the reason they cannot be used (no `APS_TEST_IMAGE`, no
 * engine, an image missing). Synchronous: test files call it while declaring their suites.
 */
export function containerImages(env: NodeJS.ProcessEnv = process.env): ContainerImages | { missing: string } {
  if (!env.APS_TEST_IMAGE) return { missing: "APS_TEST_IMAGE is not set (npm run image builds aps:dev)" };
  const images: ContainerImages = {
    aps: env.APS_TEST_IMAGE,
    postgres: env.APS_TEST_POSTGRES_IMAGE ?? "aps-base/postgres:bookworm",
    nats: env.APS_TEST_NATS_IMAGE ?? "aps-base/nats:bookworm",
  };
  const engine = spawnSync("docker", ["version", "--format", "{{.Server.Version}}"], { encoding: "utf8" });
  if (engine.status !== 0) return { missing: `no Docker engine (${(engine.stderr || String(engine.error)).trim()})` };
  for (const ref of Object.values(images))
    if (spawnSync("docker", ["image", "inspect", ref], { stdio: "ignore" }).status !== 0)
      return { missing: `image ${ref} is missing (npm run image -- --infra)` };
  process.env.TESTCONTAINERS_RYUK_DISABLED ??= "true";
  return images;
}

/**
 * The images, or: under `APS_TEST_REQUIRE_DOCKER=1` an error; otherwise a loud warning and
 * undefined (the caller declares its suite with `describe.skip` and the reason in its name).
 */
export function containerImagesOrSkip(suite: string): ContainerImages | undefined {
  const images = containerImages();
  if (!("missing" in images)) return images;
  if (dockerRequired()) throw new Error(`${suite}: ${images.missing}, and APS_TEST_REQUIRE_DOCKER=1`);
  console.warn(`\n⚠️  SKIPPED ${suite}: ${images.missing}\n`);
  return undefined;
}

const execFileAsync = promisify(execFile);

/** Runs `docker <args>` and resolves its trimmed standard output; rejects with its standard error. */
export async function docker(...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync("docker", args, { encoding: "utf8" });
  return stdout.trim();
}
