import pg from "pg";
import type { Manifest } from "../../ops/chart-tools.js";

/**
 * The rehearsal's backup and restore (docs/operations/backup-restore.md "Restore"): the chart's
 * backup CronJob run now as a Job (`kubectl create job --from=cronjob/…`), its pod spec with
 * restore.sh for the restore, the database emptied in between, and what an anonymous reader sees
 * before and after.
 */

/**
 * A Job from CronJob `cron`'s jobTemplate, named `name`, as `kubectl create job --from=cronjob/…`
 * makes it; with `script`, the container runs `sh <script>` instead (restore.sh, as the runbook's
 * `sed` does).
 */
export function jobFromCronJob(cron: Manifest, name: string, script?: string): Manifest {
  const spec = structuredClone(cron.spec.jobTemplate.spec);
  if (script) spec.template.spec.containers[0].command = ["sh", script];
  return { apiVersion: "batch/v1", kind: "Job", metadata: { name, labels: { ...cron.metadata.labels } }, spec };
}

/** What an anonymous reader gets of posts `ids`: each post, and each post's comments (every page). */
export async function readerView(baseUrl: string, ids: readonly string[]): Promise<Record<string, unknown>> {
  const get = async (path: string): Promise<any> => {
    const r = await fetch(`${baseUrl}${path}`);
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status}`);
    return r.json();
  };
  const out: Record<string, unknown> = {};
  for (const id of ids) {
    const comments: unknown[] = [];
    for (let cursor: string | null = null; ;) {
      const page: any = await get(
        `/posts/${id}/comments?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      comments.push(...page.items);
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    out[id] = { post: await get(`/posts/${id}`), comments };
  }
  return out;
}

/**
 * Empties the database at `url` (a superuser's): drops every schema but PostgreSQL's own and
 * `public`, with what is in them. Resolves with the schemas dropped.
 */
export async function emptyDatabase(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ s: string }>(
      "SELECT nspname AS s FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname NOT IN ('information_schema', 'public') ORDER BY 1",
    );
    for (const { s } of rows) await c.query(`DROP SCHEMA "${s.replaceAll('"', '""')}" CASCADE`);
    return rows.map((r) => r.s);
  } finally {
    await c.end();
  }
}
