import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../support/system.js";

/**
 * The closing summary of a jest run (test/support/summary-reporter.cjs, docs/design/tests.md#loud-skips): skipped
 * tests are counted as skipped (never passed) and listed by the names that carry the reason, a
 * skip without a reason is marked, and a file that crashed is listed and counted as failed.
 */
const require = createRequire(import.meta.url);
type Reporter = new (cfg: { rootDir: string }) => { onRunComplete(c: unknown, r: unknown): void };
const SummaryReporter = require(join(ROOT, "test/support/summary-reporter.cjs")) as Reporter;

/** One test result as jest reports it. */
const t = (status: string, ancestorTitles: string[], title: string) => ({ status, ancestorTitles, title });

/**
 * The reporter's summary of `results`, as printed. The synthetic results never reach this run's
 * outcome file (APS_TEST_OUTCOMES_OUT, the stress mode's): they are not this run's tests.
 */
function summarise(results: unknown): string {
  const outcomes = process.env.APS_TEST_OUTCOMES_OUT;
  delete process.env.APS_TEST_OUTCOMES_OUT;
  const writes: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const capture = (chunk: string | Uint8Array): boolean => {
    writes.push(String(chunk));
    return true;
  };
  process.stdout.write = capture;
  try {
    new SummaryReporter({ rootDir: ROOT }).onRunComplete(undefined, results);
  } finally {
    process.stdout.write = write;
    if (outcomes !== undefined) process.env.APS_TEST_OUTCOMES_OUT = outcomes;
  }
  return writes.join("");
}

describe("summary reporter", () => {
  it("counts skips as skipped, names their reason, marks a reasonless skip, lists a crashed file as failed", () => {
    const out = summarise({
      numPassedTests: 3,
      numFailedTests: 1,
      numPendingTests: 4,
      numTodoTests: 0,
      testResults: [
        {
          testFilePath: join(ROOT, "test/ops/helm.test.ts"),
          numFailingTests: 0,
          numPassingTests: 0,
          testResults: [
            t("pending", ["charts/aps (SKIPPED: helm missing)", "lint"], "lints"),
            t("pending", ["charts/aps (SKIPPED: helm missing)", "render"], "renders"),
          ],
        },
        {
          testFilePath: join(ROOT, "test/e2e/sagacity.test.ts"),
          numFailingTests: 0,
          numPassingTests: 3,
          testResults: [
            t("passed", ["Sagacity (real)"], "adds up"),
            t("pending", ["Sagacity (embedded)"], "SKIPPED in this mode (needs NATS): replays"),
            t("pending", ["Sagacity (embedded)"], "a quiet skip"),
          ],
        },
        {
          testFilePath: join(ROOT, "test/e2e/broken.test.ts"),
          numFailingTests: 0,
          numPassingTests: 0,
          testExecError: { message: "APS_TEST_REQUIRE_REAL=1 but the PEP dataset is missing" },
          testResults: [],
        },
      ],
    });
    expect(out).toContain("tests: 3 passed, 2 failed, 4 skipped");
    expect(out).toContain("files: 1 crashed");
    expect(out).toContain("crashed: test/e2e/broken.test.ts: APS_TEST_REQUIRE_REAL=1 but the PEP dataset is missing");
    expect(out).toContain("skipped: 2 in test/ops/helm.test.ts › charts/aps (SKIPPED: helm missing)\n");
    expect(out).toContain(
      "skipped: 1 in test/e2e/sagacity.test.ts › Sagacity (embedded) › SKIPPED in this mode (needs NATS): replays\n",
    );
    expect(out).toContain("skipped: 1 in test/e2e/sagacity.test.ts › Sagacity (embedded) (no reason in its name)\n");
    expect(out).not.toContain("slowest files"); // no timings given
  });

  it("names each failed test with its error in one line, so the end of a CI log says which test failed", () => {
    const out = summarise({
      numPassedTests: 1,
      numFailedTests: 1,
      numPendingTests: 0,
      numTodoTests: 0,
      testResults: [
        {
          testFilePath: join(ROOT, "test/e2e/webhooks.test.ts"),
          numFailingTests: 1,
          numPassingTests: 1,
          testResults: [
            t("passed", ["webhooks (real)"], "signs"),
            {
              ...t("failed", ["webhooks (real)"], "retries"),
              failureMessages: [
                "\u001b[31mError: expect(received).toBe(expected)\u001b[39m\n\nExpected: 3\nReceived: 2\n    at Object.<anonymous> (x.ts:1:1)\n    at more",
              ],
            },
          ],
        },
      ],
    });
    expect(out).toContain("tests: 1 passed, 1 failed, 0 skipped\n");
    expect(out).toContain(
      "  failed: test/e2e/webhooks.test.ts › webhooks (real) retries: Error: expect(received).toBe(expected) | Expected: 3 | Received: 2\n",
    );
    expect(out).not.toContain("signs:");
  });

  it("lists the slowest files, slowest first, with the total (docs/design/tests.md#open-handles-and-the-end-of-a-run)", () => {
    const file = (name: string, start: number, end: number) => ({
      testFilePath: join(ROOT, name),
      numFailingTests: 0,
      numPassingTests: 1,
      perfStats: { start, end },
      testResults: [t("passed", ["x"], "y")],
    });
    const out = summarise({
      numPassedTests: 3,
      numFailedTests: 0,
      numPendingTests: 0,
      numTodoTests: 0,
      testResults: [
        file("test/a.test.ts", 0, 1500),
        file("test/b.test.ts", 1000, 91_000),
        file("test/c.test.ts", 0, 20_250),
      ],
    });
    expect(out).toContain("slowest files (of 3, 112 s in all):\n");
    const rows = out.split("\n").filter((l) => / s {2}test\//.test(l));
    expect(rows.map((l) => l.trim())).toEqual([
      "90.0 s  test/b.test.ts",
      "20.3 s  test/c.test.ts",
      "1.5 s  test/a.test.ts",
    ]);
  });

  it("prints the run modes of each file that has them (docs/design/tests.md#test-tiers), and the timings to APS_TEST_TIMINGS_OUT", () => {
    const out = join(mkdtempSync(join(tmpdir(), "aps-timings-")), "t.json");
    const saved = process.env.APS_TEST_TIMINGS_OUT;
    process.env.APS_TEST_TIMINGS_OUT = out;
    let text: string;
    try {
      text = summarise({
        numPassedTests: 5,
        numFailedTests: 0,
        numPendingTests: 0,
        numTodoTests: 0,
        testResults: [
          {
            testFilePath: join(ROOT, "test/e2e/api.test.ts"),
            numFailingTests: 0,
            numPassingTests: 4,
            perfStats: { start: 0, end: 2000 },
            testResults: [
              t("passed", ["agent API end to end (embedded)"], "joins"),
              t("passed", ["agent API end to end (distributed-containers)"], "joins"),
              t("passed", ["agent API end to end (distributed)"], "joins"),
              t("passed", ["metrics on a separate port (embedded, METRICS_PORT)"], "serves"),
            ],
          },
          {
            testFilePath: join(ROOT, "test/ops/helm.test.ts"),
            numFailingTests: 0,
            numPassingTests: 1,
            perfStats: { start: 0, end: 500 },
            testResults: [t("passed", ["helm (a real chart)"], "renders")],
          },
        ],
      });
    } finally {
      if (saved === undefined) delete process.env.APS_TEST_TIMINGS_OUT;
      else process.env.APS_TEST_TIMINGS_OUT = saved;
    }
    expect(text).toContain("modes: test/e2e/api.test.ts: embedded, distributed-containers, distributed\n");
    expect(text).not.toContain("modes: test/ops/helm.test.ts");
    expect(JSON.parse(readFileSync(out, "utf8"))).toEqual({
      passed: 5,
      failed: 0,
      skipped: 0,
      crashed: [],
      failures: [],
      files: { "test/e2e/api.test.ts": 2, "test/ops/helm.test.ts": 0.5 },
      cpu: {},
    });
  });

  it("counts each file's CPU seconds, its child processes' included, and lists the files that used the most", async () => {
    const reporter = new (
      SummaryReporter as unknown as new (cfg: { rootDir: string }) => {
        onTestStart(t: { path: string }): void;
        onTestResult(t: { path: string }): void;
        cpu: Map<string, number>;
      }
    )({ rootDir: ROOT });
    const busy = { path: join(ROOT, "test/busy.test.ts") };
    const idle = { path: join(ROOT, "test/idle.test.ts") };
    // 0.6 CPU-s in a child process (reaped before the file ends) — CPU time, not wall time, so a
    // loaded machine cannot shorten it — measured against a file that computes nothing
    reporter.onTestStart(busy);
    await new Promise<void>((resolve, reject) =>
      spawn(process.execPath, [
        "-e",
        "const u = () => { const c = process.cpuUsage(); return c.user + c.system; }; const t = u(); while (u() - t < 600000);",
      ])
        .on("exit", () => resolve())
        .on("error", reject),
    );
    reporter.onTestResult(busy);
    reporter.onTestStart(idle);
    reporter.onTestResult(idle);
    expect(reporter.cpu.get(busy.path)).toBeGreaterThanOrEqual(0.55);
    expect(reporter.cpu.get(idle.path)).toBeLessThan(0.1);
    const { mostCpu } = require(join(ROOT, "test/support/summary-reporter.cjs")) as {
      mostCpu(cpu: Record<string, number>, root: string): string[];
    };
    const lines = mostCpu(Object.fromEntries(reporter.cpu), ROOT);
    expect(lines[0]).toMatch(/^most CPU \(of 2 files, \d+ CPU-s in all/);
    expect(lines[1]).toMatch(/^ +\d+\.\d s {2}test\/busy\.test\.ts$/);
  });
});
