import { randomBytes } from "node:crypto";
import { PROD_VALUES, renderChart, type Manifest, type Tools } from "../../ops/chart-tools.js";

/**
 * The rehearsal's render: `helm template` of charts/aps with the production recipe
 * (values-production.yaml) and the few overrides a one-machine rehearsal needs, as an upgrade
 * (`--is-upgrade`), so the migration hook Jobs are rendered and the pods verify their schemas.
 */

/** What the rehearsal changes on top of values-production.yaml, each with its reason. */
export interface RehearsalValues {
  /** The APS image, e.g. `aps:dev`: `image.repository` and `image.tag`. */
  image: string;
  /** NATS servers of the in-chart JetStream cluster (default 3, as production). */
  natsReplicas?: number;
}

/**
 * The `--set` arguments of the rehearsal (pairs `--set k=v`), on top of `-f values-production.yaml`:
 * - in-chart PostgreSQL behind the in-chart PgBouncer and in-chart 3-server NATS, instead of the
 *   external ones production points at (nothing external is reachable here);
 * - `search.engine=postgres` (no Meilisearch);
 * - the chart's own Secret instead of `secrets.existingSecret` (see {@link renderRehearsal}), with
 *   a random admin token;
 * - `otel.endpoint=""`: no OpenTelemetry collector runs here;
 * - rate and daily limits raised: every request of the load comes from one client address (the
 *   test process), where production has many agents on many addresses;
 * - the council's last call and sealed ballots off, as the API suite expects (test/support/system.ts),
 *   and the agenda's threshold out of reach, as the notifications suite expects.
 */
export function rehearsalSetArgs(v: RehearsalValues): string[] {
  const colon = v.image.lastIndexOf(":");
  if (colon <= 0 || v.image.includes("@")) throw new Error(`rehearsal image must be repository:tag, got ${v.image}`);
  const sets: Record<string, string | number | boolean> = {
    "image.repository": v.image.slice(0, colon),
    "image.tag": v.image.slice(colon + 1),
    "image.pullPolicy": "Never",
    "postgresql.deployed.enabled": true,
    "pgbouncer.enabled": true,
    "nats.deployed.enabled": true,
    "nats.deployed.replicas": v.natsReplicas ?? 3,
    "search.engine": "postgres",
    "meilisearch.deployed.enabled": false,
    "secrets.existingSecret": "",
    // the admin token production keeps in its existing Secret (the API suite's owner calls)
    "secrets.adminToken": randomBytes(32).toString("hex"),
    "otel.endpoint": "",
    "components.gateway.env.RATE_LIMIT_KEYED_PER_MINUTE": "100000",
    "components.gateway.env.RATE_LIMIT_ANON_PER_MINUTE": "100000",
    "components.gateway.env.RATE_LIMIT_SOURCE_PER_MINUTE": "1000000",
    "components.identity.env.JOINS_PER_SOURCE_PER_DAY": "10000",
    "components.forum.env.POSTS_PER_DAY": "100000",
    "components.forum.env.COMMENTS_PER_DAY": "100000",
    // the API suite's conventions (test/support/system.ts): a case decided by ballots closes at
    // once, and every position is public while a case is open
    "components.council.env.LAST_CALL_MS": "0",
    "components.council.env.BALLOT_SEALING": "off",
    // and the notifications suite's: the Council sees only what its script nominates
    "components.forum.env.AGENDA_MIN_SCORE": "1000000",
    // and both suites' fresh agents vote and flag at once (docs/design/identity-and-abuse.md#new-agents)
    "components.forum.env.MIN_AGENT_AGE_MS": "0",
    // the nightly dump's CronJob and its volume (docs/operations/backup-restore.md)
    "postgresql.deployed.backup.enabled": true,
  };
  // strings as strings (`--set-string`: "100000" stays an env value), the rest typed (`--set`)
  return Object.entries(sets).flatMap(([k, val]) => [
    typeof val === "string" ? "--set-string" : "--set",
    `${k}=${val}`,
  ]);
}

/** A key of the rendered Secrets (`data` base64, or `stringData`); throws when none has it. */
export function renderedSecret(objects: readonly Manifest[], key: string): string {
  for (const s of objects.filter((o) => o.kind === "Secret")) {
    const stringData = s.stringData as Record<string, string> | undefined;
    if (stringData?.[key] !== undefined) return stringData[key];
    if (s.data?.[key] !== undefined) return Buffer.from(String(s.data[key]), "base64").toString("utf8");
  }
  throw new Error(`no rendered Secret has ${key}`);
}

/**
 * Renders the chart for the rehearsal (see {@link rehearsalSetArgs}) with `helm template
 * --is-upgrade`: the pre-upgrade migration Jobs are part of the render and the app pods run with
 * DATABASE_MIGRATIONS=verify — the path of every upgrade. The Secret is the chart's own: with the
 * in-chart PostgreSQL the chart generates each role's password and its init script and PgBouncer's
 * userlist read them from that Secret; `aps chart-secret` makes the Secret for an external
 * database (its roles' SQL run by the owner), which this topology does not have.
 * Returns every rendered object (validated against the Kubernetes schemas by renderChart).
 * Rejects with helm's stderr when the render fails.
 */
export async function renderRehearsal(tools: Tools, v: RehearsalValues): Promise<Manifest[]> {
  return renderChart(tools, ["-f", PROD_VALUES, ...rehearsalSetArgs(v), "--is-upgrade"]);
}
