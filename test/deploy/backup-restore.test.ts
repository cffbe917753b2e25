import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { ADMIN_DATABASE_URL, httpClient, pepsDatasetPath } from "@aps/testkit";
import { chartTools, renderChart, type Tools } from "../ops/chart-tools.js";
import { joinAgents, propose } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * Backup and restore of the in-chart PostgreSQL (docs/operations/backup-restore.md), with the
 * scripts the chart renders (postgresql.deployed.backup: the CronJob's backup.sh and the documented
 * restore.sh), run here against the real PostgreSQL: 100 PEPs proposed, commented and voted on;
 * a backup (with the pruning of older dumps); an empty database; the restore; then APS started on
 * the restored database answers the same for every post and its timeline, and the first page of
 * the list. Prints the dump size and the restore time (the RTO's database part).
 */
const run = promisify(execFile);
const tools = await chartTools();
const pgTools = await run("pg_dump", ["--version"]).then(
  () => undefined,
  () => "pg_dump not found (Debian package postgresql-client)",
);
const real = (await availableModes()).includes("real");
const missing =
  "skipReason" in tools ? tools.skipReason : (pgTools ?? (real ? undefined : "no real PostgreSQL and NATS"));
if (missing && process.env.APS_TEST_REQUIRE_REAL === "1")
  throw new Error(`${missing}: required under APS_TEST_REQUIRE_REAL=1`);
if (missing) console.warn(`SKIPPING the backup/restore test: ${missing}`);

const POSTS = 100;

/** The first `n` PEPs of the dataset as proposals: title and the abstract's first 4,000 characters. */
function peps(n: number): Array<{ title: string; body: string }> {
  return readFileSync(pepsDatasetPath(), "utf8")
    .split("\n")
    .filter(Boolean)
    .slice(0, n)
    .map((l) => JSON.parse(l) as { pep: number; title: string; abstract?: string })
    .map((p) => ({ title: `PEP ${p.pep}: ${p.title}`.slice(0, 200), body: (p.abstract || p.title).slice(0, 4_000) }));
}

/** libpq's environment for `url` (postgres://user@host:port/db). */
function libpqEnv(url: string): Record<string, string> {
  const u = new URL(url);
  return {
    PGHOST: u.hostname,
    PGPORT: u.port || "5432",
    PGUSER: decodeURIComponent(u.username || "postgres"),
    PGDATABASE: u.pathname.slice(1),
    ...(u.password ? { PGPASSWORD: decodeURIComponent(u.password) } : {}),
  };
}

(missing ? describe.skip : describe)(
  missing
    ? `backup and restore (SKIPPED: ${missing})`
    : "backup and restore of the in-chart PostgreSQL (the chart's scripts)",
  () => {
    let sys: System | undefined;
    let restored: System | undefined;
    let dir: string;
    let scripts: string;
    let restoredDb: string | undefined;
    const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });

    beforeAll(async () => {
      const ms = await renderChart(tools as Tools, ["--set", "postgresql.deployed.backup.enabled=true"]);
      const cm = ms.find((m) => m.kind === "ConfigMap" && m.metadata.name === "aps-postgresql-backup");
      if (!cm) throw new Error("the chart rendered no aps-postgresql-backup ConfigMap");
      const job = ms.find((m) => m.kind === "CronJob")!;
      expect(job.spec.jobTemplate.spec.template.spec.containers[0].command).toEqual(["sh", "/scripts/backup.sh"]);
      dir = mkdtempSync(join(tmpdir(), "aps-backup-"));
      scripts = join(dir, "scripts");
      mkdirSync(scripts);
      mkdirSync(join(dir, "dumps"));
      for (const [name, text] of Object.entries(cm.data!)) writeFileSync(join(scripts, name), text);
      await admin.connect();
      sys = await startSystem("real", { env: { JOINS_PER_SOURCE_PER_DAY: "10000", POSTS_PER_DAY: "1000" } });
    }, 300_000);
    afterAll(async () => {
      await restored?.stop();
      await sys?.stop();
      if (restoredDb) await admin.query(`DROP DATABASE IF EXISTS "${restoredDb}" WITH (FORCE)`);
      await admin.end();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it(`${POSTS} PEPs with comments and votes: backed up, restored into an empty database, answered the same`, async () => {
      const live = sys!;
      const agents = await joinAgents(live, 10, "backup");
      const ids: string[] = [];
      for (const [i, p] of peps(POSTS).entries()) {
        const author = agents[i % agents.length]!;
        const id = await propose(author, p);
        ids.push(id);
        const other = agents[(i + 1) % agents.length]!;
        const c = await other.client.POST("/v1/posts/{id}/comments", {
          params: { path: { id } },
          body: { body: `On ${p.title}.` },
        });
        expect(c.response.status).toBe(201);
        const v = await other.client.POST("/v1/posts/{id}/vote", { params: { path: { id } }, body: { vote: 1 } });
        expect(v.response.status).toBe(200);
      }
      /** What an anonymous reader gets: every post with its timeline, and the list's first page. */
      const snapshot = async (s: System) => {
        const get = httpClient(s.baseUrl);
        const posts = [];
        for (const id of ids) {
          const r = await get("GET", `/posts/${id}`);
          expect(r.status).toBe(200);
          posts.push(r.body);
        }
        const list = await get("GET", "/posts?limit=50&sort=new");
        expect(list.status).toBe(200);
        return { posts, list: list.body };
      };
      const before = await snapshot(live);

      // backup: the CronJob's script, with two older dumps that KEEP=2 prunes to one
      const pgEnv = libpqEnv(live.env!.DATABASE_URL!);
      const env = { ...process.env, ...pgEnv, BACKUP_DIR: join(dir, "dumps"), KEEP: "2" };
      const dbName = pgEnv.PGDATABASE!;
      for (const [k, age] of [
        ["20200101T000000Z", 3],
        ["20200102T000000Z", 2],
      ] as const) {
        const f = join(dir, "dumps", `${dbName}-${k}.dump`);
        writeFileSync(f, "old");
        const t = Date.now() / 1000 - age * 86_400;
        utimesSync(f, t, t);
      }
      const backup = await run("sh", [join(scripts, "backup.sh")], { env });
      const kept = readdirSync(join(dir, "dumps")).sort();
      expect(kept).toHaveLength(2);
      expect(kept[0]).toBe(`${dbName}-20200102T000000Z.dump`);
      const dump = join(dir, "dumps", kept[1]!);
      expect(backup.stdout).toContain(`backup: ${dump}`);

      // an empty database, the restore script into it
      restoredDb = `${dbName}_restored`;
      await admin.query(`DROP DATABASE IF EXISTS "${restoredDb}" WITH (FORCE)`);
      await admin.query(`CREATE DATABASE "${restoredDb}"`);
      const t0 = performance.now();
      const restore = await run("sh", [join(scripts, "restore.sh"), dump], { env: { ...env, PGDATABASE: restoredDb } });
      const restoreMs = performance.now() - t0;
      expect(restore.stdout).toContain("restore: done");

      // APS on the restored database answers as before
      const url = new URL(live.env!.DATABASE_URL!);
      url.pathname = `/${restoredDb}`;
      restored = await startSystem("real", { databaseUrl: url.toString() });
      const t1 = performance.now();
      const after = await snapshot(restored);
      expect(after.list).toEqual(before.list);
      expect(after.posts).toEqual(before.posts);
      const size = readFileSync(dump).length;
      console.log(
        `[backup-restore] ${POSTS} posts, ${POSTS} comments, ${POSTS} votes: dump ${(size / 1024).toFixed(0)} KiB; restore ${restoreMs.toFixed(0)} ms; ${ids.length + 1} answers compared in ${(performance.now() - t1).toFixed(0)} ms, all equal`,
      );
    }, 900_000);
  },
);
