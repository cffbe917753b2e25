#!/usr/bin/env node
// Lists the fixed sleeps in test code and fails when one stands outside the exception list below
// (docs/design/tests.md "Waiting"). A test waits for the condition it needs — `waitUntil` or
// `eventually` from @aps/testkit, an event, a promise — never for a fixed time: on a busy machine
// the time passes and the condition has not come, on a quiet one the test waits for nothing.
//
// What counts as a fixed sleep, in every *.test.ts and every file under test/ and packages/testkit/src:
//   - a promise resolved by a timer: `new Promise((r) => setTimeout(r, …))`, `setTimeout(resolve, …)`,
//     `setTimeout(() => resolve(…), …)` (also the body of a home-made `sleep`);
//   - `node:timers/promises` (its setTimeout is a sleep);
//   - `pause(ms, why)` (@aps/testkit): allowed only in the files of EXCEPTIONS, each with its reason.
// Timer callbacks that are not waits stay allowed: a stand-in peer that answers late
// (`setTimeout(() => res.end(), 9000)`), an abort after a while, a middleware that delays `next`.
//
//   node scripts/check-sleeps.mjs            exits 1 on a fixed sleep outside EXCEPTIONS
//   node scripts/check-sleeps.mjs --list     also lists the allowed pauses
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * The documented exceptions: files whose `pause(ms, why)` calls wait a fixed time because the time
 * itself is what the test is about. Keep it short; docs/design/tests.md explains the rule.
 */
export const EXCEPTIONS = {
  // the helper itself: a poll interval between two looks at a condition, and pause()
  "packages/testkit/src/wait.ts": "defines waitUntil/eventually's poll interval and pause()",
  "packages/testkit/src/wait.test.ts": "tests pause() itself",
  "test/faults/containers.test.ts":
    "each container fault (docker pause, network cut, NATS stop) lasts FAULT_MS: the outage's length is the subject",
  "test/faults/event-outage.test.ts":
    "the consumer's database is down OUTAGE_MS (8 s), past the old give-up: the outage's length is the subject",
  "test/deploy/rehearsal/load.ts":
    "carriedRate measures the load over a window of fixed length at each rate: the window is the measure",
  "test/scale/webhook-fanout.test.ts":
    "a paced load, 10 events a second for 30 s: the rate is the subject of this timing bound (alone lane)",
};

/** The patterns of a fixed sleep: [name, regex over one line]. */
const PATTERNS = [
  [
    "promise resolved by a timer",
    /new Promise\s*(<[^>]*>)?\s*\(\s*\(?\s*(\w+)[^)]*\)?\s*=>\s*\{?\s*setTimeout\s*\(\s*\2\s*[,)]/,
  ],
  ["timer resolving a promise", /setTimeout\s*\(\s*(resolve|res|r|done)\s*[,)]/],
  ["timer resolving a promise", /setTimeout\s*\(\s*\(\)\s*=>\s*\{?\s*(resolve|res|r)\s*\(/],
  ["timers/promises", /from\s+["']node:timers\/promises["']|require\(["'](node:)?timers\/promises["']\)/],
  ["pause", /(?<![.\w])pause\s*\(/],
];

/** Every file the rule covers, relative to the root. */
function files() {
  const out = [];
  const walk = (dir, all) => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      if (e.name === "node_modules" || e.name === "dist" || e.name === "gen") continue;
      const p = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(p, all);
      else if (/\.(ts|mts|cts|mjs|cjs|js)$/.test(e.name) && (all || e.name.endsWith(".test.ts"))) out.push(p);
    }
  };
  for (const d of ["packages", "services"])
    for (const p of readdirSync(join(root, d))) {
      try {
        walk(`${d}/${p}/src`, `${d}/${p}` === "packages/testkit");
      } catch {
        // a folder without src/
      }
    }
  walk("test", true);
  // benchmarks measure time on purpose (test/bench is not a test lane)
  return out.filter((f) => !f.startsWith("test/bench/")).sort();
}

/** The fixed sleeps in `file`: `{ file, line, kind, text }` each. */
export function sleepsIn(file) {
  const found = [];
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  // home-made sleeps: `const sleep = (ms) => new Promise(…setTimeout…)`, `function tick(ms) { return new Promise(…) }`
  const names = new Set();
  lines.forEach((text, i) => {
    const near = lines.slice(i, i + 3).join(" ");
    const m = /(?:const|let)\s+(\w+)\s*=\s*(?:async\s*)?\(/.exec(text) ?? /function\s+(\w+)\s*\(/.exec(text);
    if (m && PATTERNS.slice(0, 3).some(([, re]) => re.test(near))) names.add(m[1]);
  });
  const calls = names.size > 0 ? new RegExp(`(?<![.\\w])(${[...names].join("|")})\\s*\\(`) : undefined;
  lines.forEach((text, i) => {
    if (/^\s*(\/\/|\*)/.test(text)) return; // comments
    for (const [kind, re] of PATTERNS)
      if (re.test(text)) {
        found.push({ file, line: i + 1, kind, text: text.trim() });
        return;
      }
    if (calls && calls.test(text) && !/(?:const|let|function)\s+\w+\s*[=(]/.test(text))
      found.push({ file, line: i + 1, kind: "home-made sleep", text: text.trim() });
  });
  return found;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const all = files().flatMap(sleepsIn);
  const allowed = all.filter(
    (s) => EXCEPTIONS[s.file] && (s.kind === "pause" || s.file === "packages/testkit/src/wait.ts"),
  );
  const bad = all.filter((s) => !allowed.includes(s));
  if (process.argv.includes("--list") || bad.length === 0) {
    console.log(
      `fixed sleeps in test code: ${bad.length} outside the exception list, ${allowed.length} allowed in ${Object.keys(EXCEPTIONS).length} listed file(s):`,
    );
    for (const s of allowed) console.log(`  allowed  ${s.file}:${s.line}  (${EXCEPTIONS[s.file]})  ${s.text}`);
  }
  if (bad.length > 0) {
    console.error(
      `fixed sleeps in test code outside the exception list (${bad.length}; docs/design/tests.md "Waiting" says what to use instead):`,
    );
    for (const s of bad) console.error(`  ${s.file}:${s.line}  [${s.kind}]  ${s.text}`);
    process.exit(1);
  }
}
