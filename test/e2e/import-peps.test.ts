import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hasNats, hasPostgres, httpClient, pepsDatasetPath } from "@aps/testkit";
import { ROOT, startSystem, type Mode, type System } from "../support/system.js";

/**
 * Replays the 736 real PEPs (docs/design/services.md#the-pep-data-set) through the public API with the CLI
 * (`aps import-peps`, run as a child process like a user would), then reads every post back over
 * HTTP: titles `PEP <n>: <title>`, bodies byte-for-byte the PEP text ("originals are always
 * preserved"), one agent per distinct first author, and exactly one post per JSONL line. The
 * expected values are computed here from the JSONL itself, not taken from the CLI's output.
 */
const DATASET = pepsDatasetPath();
const TIMEOUT_MS = 900_000;

const haveDataset = existsSync(DATASET);
if (!haveDataset) {
  console.warn(
    `\n\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n` +
      `!! import-peps.test.ts: the PEP dataset is missing at ${DATASET}\n` +
      `!! (set APS_PEPS_DATASET, or put it beside the repository: docs/design/services.md#the-pep-data-set) — the PEP import\n` +
      `!! end-to-end test is SKIPPED. Put the dataset there to run it.\n` +
      `!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n`,
  );
}
const mode: Mode = haveDataset && (await hasPostgres()) && (await hasNats()) ? "real" : "embedded";

/** One JSONL line as this test reads it (independently of the CLI's parser). */
interface PepLine {
  pep: number;
  title: string;
  authors: string[];
  text: string | null;
}

/** Runs the built CLI; resolves its exit code and output. */
function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "services/cli/dist/main.js"), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs `fn` over `items` with at most `n` at once. */
async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

(haveDataset ? describe : describe.skip)(
  `aps import-peps of the full PEP dataset (${mode})${haveDataset ? "" : " (SKIPPED: the PEP dataset is missing)"}`,
  () => {
    let sys: System | undefined;
    let req: ReturnType<typeof httpClient>;
    const tmp = mkdtempSync(join(tmpdir(), "aps-peps-"));
    const lines = haveDataset
      ? readFileSync(DATASET, "utf8")
          .split("\n")
          .filter((l) => l.trim() !== "")
      : [];
    const peps: PepLine[] = lines.map((l) => JSON.parse(l) as PepLine);

    beforeAll(async () => {
      sys = await startSystem(mode, {
        env: {
          POSTS_PER_DAY: "1000",
          JOINS_PER_SOURCE_PER_DAY: "10000",
          // Should per-minute rate limits exist, they must not throttle one importing client either.
          RATE_LIMIT_KEYED_PER_MINUTE: "100000",
          RATE_LIMIT_ANON_PER_MINUTE: "100000",
        },
      });
      req = httpClient(sys.baseUrl);
    }, 180_000);
    afterAll(async () => {
      await sys?.stop();
      rmSync(tmp, { recursive: true, force: true });
    }, TIMEOUT_MS);

    it(
      "imports every PEP through the CLI and reads each one back verbatim, authored by its first author's agent",
      async () => {
        expect(peps.length).toBe(736);
        expect(new Set(peps.map((p) => p.pep)).size).toBe(peps.length);
        const out = join(tmp, "result.json");

        const t0 = Date.now();
        const run = await runCli(["import-peps", DATASET, "--out", out], { APS_URL: sys!.baseUrl });
        const importMs = Date.now() - t0;
        console.log(
          `[import-peps.test] imported ${peps.length} PEPs in ${importMs} ms (${mode}); CLI said: ${run.stdout.trim()}`,
        );
        if (run.code !== 0) throw new Error(`aps import-peps exited ${run.code}:\n${run.stderr}\n${run.stdout}`);
        expect(JSON.parse(run.stdout.trim().split("\n").at(-1)!)).toMatchObject({ imported: peps.length });

        // The CLI's report: only used to find the post ids and API keys the server handed out.
        const result = JSON.parse(readFileSync(out, "utf8")) as {
          agents: Record<string, { agentId: string; apiKey: string }>;
          posts: { pep: number; postId: string; authorAgentId: string }[];
        };
        const postIdOf = new Map(result.posts.map((p) => [p.pep, p.postId]));
        expect(postIdOf.size).toBe(peps.length);

        // Every post the API lists, page by page: exactly one per JSONL line, none extra.
        const listed: string[] = [];
        let cursor: string | null = null;
        do {
          const page: { status: number; body: { items: { id: string }[]; nextCursor: string | null } } = await req(
            "GET",
            `/posts?sort=new&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
          );
          expect(page.status).toBe(200);
          listed.push(...page.body.items.map((p) => p.id));
          cursor = page.body.nextCursor;
        } while (cursor);
        expect(listed.length).toBe(lines.length);
        expect(new Set(listed).size).toBe(lines.length);
        expect(new Set(listed)).toEqual(new Set(postIdOf.values()));

        // Each post read back: title, body verbatim, author = the first author's agent.
        const agentOfAuthor = new Map<string, string>();
        const mismatches: string[] = [];
        await pool(peps, 8, async (pep) => {
          const id = postIdOf.get(pep.pep);
          if (!id) return void mismatches.push(`PEP ${pep.pep}: no post id`);
          const r = await req("GET", `/posts/${id}`);
          if (r.status !== 200)
            return void mismatches.push(`PEP ${pep.pep}: GET /posts/${id} → ${r.status} ${r.text.slice(0, 200)}`);
          const expectedTitle = `PEP ${pep.pep}: ${pep.title}`;
          if (r.body.title !== expectedTitle)
            mismatches.push(`PEP ${pep.pep}: title ${JSON.stringify(r.body.title)} ≠ ${JSON.stringify(expectedTitle)}`);
          if (r.body.body !== pep.text) {
            const got = String(r.body.body);
            const want = pep.text ?? "";
            let at = 0;
            while (at < got.length && got[at] === want[at]) at++;
            mismatches.push(
              `PEP ${pep.pep}: body differs (lengths ${String(r.body.body).length}/${pep.text?.length}, first difference at ${at})`,
            );
          }
          if (r.body.isArchDesign !== true) mismatches.push(`PEP ${pep.pep}: not an architecture proposal`);
          const firstAuthor = pep.authors[0]!;
          if (r.body.author?.name !== firstAuthor)
            mismatches.push(
              `PEP ${pep.pep}: author ${JSON.stringify(r.body.author?.name)} ≠ ${JSON.stringify(firstAuthor)}`,
            );
          const known = agentOfAuthor.get(firstAuthor);
          if (known === undefined) agentOfAuthor.set(firstAuthor, r.body.author.agentId);
          else if (known !== r.body.author.agentId)
            mismatches.push(
              `PEP ${pep.pep}: ${firstAuthor} is agent ${r.body.author.agentId} here but ${known} elsewhere`,
            );
        });
        expect(mismatches).toEqual([]);

        // One agent per distinct first author, and that agent's key says so on GET /me.
        const firstAuthors = new Set(peps.map((p) => p.authors[0]!));
        expect(agentOfAuthor.size).toBe(firstAuthors.size);
        expect(new Set(agentOfAuthor.values()).size).toBe(firstAuthors.size);
        expect(new Set(Object.keys(result.agents))).toEqual(firstAuthors);
        const wrongKeys: string[] = [];
        await pool([...firstAuthors], 8, async (author) => {
          const me = await req("GET", "/me", { key: result.agents[author]!.apiKey });
          if (me.status !== 200 || me.body.agentId !== agentOfAuthor.get(author) || me.body.name !== author)
            wrongKeys.push(
              `${author}: GET /me → ${me.status} ${me.body?.agentId}/${me.body?.name}, posts by ${agentOfAuthor.get(author)}`,
            );
        });
        expect(wrongKeys).toEqual([]);
      },
      TIMEOUT_MS,
    );
  },
);
