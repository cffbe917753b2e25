import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { docker } from "@aps/testkit";

/**
 * The image of each rendered container on this machine, where no registry is reachable: the
 * project's image as rendered, and each dependency image of the chart mapped to a local image
 * built from Debian's packages, with what its pod needs adapted here (never in the chart).
 */

const HERE = dirname(fileURLToPath(import.meta.url));

/** The local images the rehearsal runs. */
export interface LocalImages {
  /** The APS image (`npm run image`), e.g. `aps:dev`. */
  aps: string;
  /** `aps-base/postgres:<suite>` (deploy/docker/base/postgres.Dockerfile). */
  postgres: string;
  /** `aps-base/nats:<suite>` (deploy/docker/base/nats.Dockerfile). */
  nats: string;
  /** `aps-rehearsal-pgbouncer:<suite>` (test/deploy/rehearsal/pgbouncer.Dockerfile). */
  pgbouncer: string;
  /** The previous commit's APS image (`npm run rehearsal:previous`), for the rollback and upgrade. */
  previous?: string;
}

/** How one rendered container runs here: the local image and the adaptations of its pod spec. */
export interface ImageAdapter {
  /** The local image. */
  image: string;
  /** Replaces the image's entrypoint when the pod sets no `command`. */
  entrypoint?: string;
  /** `docker run --user`, replacing the pod's runAsUser:runAsGroup. */
  user?: string;
  /** Extra `docker run --volume` specs (host:container:ro). */
  mounts?: string[];
  /** `docker run --stop-signal`: the signal `docker stop` sends in place of SIGTERM. */
  stopSignal?: string;
  /** Rewrites a mounted ConfigMap/Secret file (its name, its text) for this image. */
  adaptFile?: (file: string, text: string) => string;
  /** Why it differs from the rendered container, for the log; empty when it does not. */
  note: string;
}

/**
 * Drops `sync_interval` from a NATS server config: Debian's nats-server (2.9) refuses the field,
 * which came with 2.10. JetStream then syncs on its own schedule (2.9: every 2 minutes); an
 * acknowledged event still has its 3 copies on 3 servers (the stream's replicas), which is what a
 * single server's loss needs — but a crash of every server at once is not rehearsed with it.
 */
export function natsConfigFor29(text: string): string {
  return text.replace(/^\s*sync_interval:.*$\n?/m, "");
}

/** The repository of an image reference without registry host, tag or digest: `nats`, `edoburu/pgbouncer`. */
export function repositoryOf(ref: string): string {
  const noDigest = ref.split("@")[0]!;
  const parts = noDigest.split("/");
  if (parts.length > 1 && /[.:]|^localhost$/.test(parts[0]!)) parts.shift();
  const last = parts.pop()!;
  return [...parts, last.split(":")[0]!].join("/");
}

/**
 * The adapter of the rendered container image `rendered` (see the notes in the code for each
 * mapping). Throws for an image the rehearsal has no local stand-in for.
 */
export function adaptImage(rendered: string, images: LocalImages): ImageAdapter {
  if (rendered === images.aps || rendered === images.previous) return { image: rendered, note: "" };
  switch (repositoryOf(rendered)) {
    case "postgres":
      // The official image initialises $PGDATA as $POSTGRES_USER and runs
      // /docker-entrypoint-initdb.d/ (the chart's roles script); aps-base/postgres's own entrypoint
      // does neither, so the adapter script implements that contract. Debian's `postgres` user
      // (uid 100) owns the data directory, where the alpine image's is uid 70.
      return {
        image: images.postgres,
        entrypoint: "/aps-rehearsal/postgres-entrypoint.sh",
        user: "postgres",
        mounts: [`${join(HERE, "postgres-entrypoint.sh")}:/aps-rehearsal/postgres-entrypoint.sh:ro`],
        note: `${rendered} → ${images.postgres} (Debian's PostgreSQL; the official entrypoint's initdb contract from postgres-entrypoint.sh; user postgres for uid 70)`,
      };
    case "nats":
      // The pod's command (`nats-server -js -c /etc/nats/nats.conf`) replaces the image's
      // entrypoint, as on the official image; Debian's nats-server is an older 2.x.
      return {
        image: images.nats,
        adaptFile: (file, text) => (file.endsWith(".conf") ? natsConfigFor29(text) : text),
        note: `${rendered} → ${images.nats} (Debian's nats-server 2.9: the config's sync_interval dropped)`,
      };
    case "edoburu/pgbouncer":
      // The pod's command is `/bin/sh -c …; exec pgbouncer /etc/pgbouncer/pgbouncer.ini`: any image
      // with sh and pgbouncer on the PATH serves.
      // The chart's PgBouncer (1.23) takes SIGTERM as a safe shutdown (no new clients, the
      // running transactions finish); Debian's 1.18 takes SIGTERM as an immediate shutdown that
      // cuts them, and SIGINT as its safe one: the stop signal is SIGINT here.
      return {
        image: images.pgbouncer,
        stopSignal: "SIGINT",
        note: `${rendered} → ${images.pgbouncer} (Debian's pgbouncer 1.18; stop signal SIGINT, its safe shutdown, for 1.23's SIGTERM)`,
      };
    default:
      throw new Error(
        `no local image for ${rendered}: the rehearsal maps ${images.aps}, postgres, nats and edoburu/pgbouncer`,
      );
  }
}

const hasImage = (ref: string) => spawnSync("docker", ["image", "inspect", ref], { stdio: "ignore" }).status === 0;

/**
 * The local images for `aps` (an `npm run image` tag) with the infrastructure images of Debian
 * `suite`, or `{ missing }` naming the first one absent (`npm run image -- --infra` makes them);
 * the PgBouncer image is not counted missing — {@link buildPgbouncerImage} makes it. `previous`:
 * the previous commit's APS image too (missing: `npm run rehearsal:previous`).
 */
export function localImages(aps: string, suite = "bookworm", previous?: string): LocalImages | { missing: string } {
  const images: LocalImages = {
    aps,
    ...(previous ? { previous } : {}),
    postgres: process.env.APS_TEST_POSTGRES_IMAGE ?? `aps-base/postgres:${suite}`,
    nats: process.env.APS_TEST_NATS_IMAGE ?? `aps-base/nats:${suite}`,
    pgbouncer: `aps-rehearsal-pgbouncer:${suite}`,
  };
  for (const ref of [
    images.aps,
    images.postgres,
    images.nats,
    `aps-base/debian:${suite}`,
    ...(previous ? [previous] : []),
  ])
    if (!hasImage(ref)) return { missing: `image ${ref} is missing (npm run image -- --infra)` };
  return images;
}

/**
 * Builds `images.pgbouncer` from test/deploy/rehearsal/pgbouncer.Dockerfile on the local
 * `aps-base/debian:<suite>` base when it is absent (Debian's package, apt from the build). Resolves
 * once the image exists; rejects with docker's stderr when the build fails.
 */
export async function buildPgbouncerImage(images: LocalImages): Promise<void> {
  if (hasImage(images.pgbouncer)) return;
  const suite = images.pgbouncer.split(":")[1]!;
  await docker(
    "build",
    "--build-arg",
    `DEBIAN_IMAGE=aps-base/debian:${suite}`,
    "-f",
    join(HERE, "pgbouncer.Dockerfile"),
    "-t",
    images.pgbouncer,
    HERE,
  );
}
