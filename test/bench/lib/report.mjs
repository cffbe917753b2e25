// The bench's output: goal lines of docs/performance.md ("Goals") judged on a mode's figures, a
// markdown report (measurements beside their baselines, then pass/fail per goal) and the JSON.
import { round } from "./load.mjs";

const MiB = 1024 * 1024;

/** A post count as 10k / 1M (exact multiples), else the plain number. */
export function count(n) {
  if (n >= 1e6 && n % 1e6 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 1e3 === 0) return `${n / 1e3}k`;
  return String(n);
}

/** `a / b` rounded to 2 decimals, or null when either is missing. */
export function ratio(a, b) {
  return a == null || b == null || b === 0 ? null : round(a / b, 2);
}

/**
 * Goal lines for one mode's result `m` (shape: see run.mjs `benchMode`), from docs/performance.md
 * "Goals": each `{ goal, value, pass }` with `pass` null when the figure could not be measured.
 * @param {any} m
 */
export function goals(m) {
  const hot = m.reads?.hot;
  const post = m.reads?.post;
  const out = [];
  const line = (goal, value, pass, shown) =>
    out.push({ goal, value, pass: value == null ? null : pass, shown: value == null ? "n/a" : shown });
  const x = (v) => `${v}×`;
  const hotRatio = ratio(hot?.aps.reqPerSec, hot?.express.reqPerSec);
  const voteRatio = ratio(m.votes?.aps.reqPerSec, m.votes?.rawUpsert?.reqPerSec);
  const contended = ratio(m.votesContended?.aps.reqPerSec, m.votesContended?.rawUpsert?.reqPerSec);
  const tally = m.votes?.tally;
  if (m.mode === "embedded") {
    line("hot list ≥ 0.5× express (aim 0.8×)", hotRatio, hotRatio >= 0.5, x(hotRatio));
    line("hot list p99 ≤ 20 ms", hot?.aps.p99, hot?.aps.p99 <= 20, `${hot?.aps.p99} ms`);
    const postRatio = ratio(post?.aps.reqPerSec, post?.express.reqPerSec);
    line("/posts/{id} ≥ 0.4× express", postRatio, postRatio >= 0.4, x(postRatio));
    line("votes ≥ 0.2× raw upsert (aim 0.3×)", voteRatio, voteRatio >= 0.2, x(voteRatio));
    line("contended votes ≥ 0.2× raw upsert on the same posts", contended, contended >= 0.2, x(contended));
    const empty = m.start?.empty ? Math.max(m.start.empty.lineMs, m.start.empty.readyzMs) : null;
    line("start ≤ 6 s on an empty data folder", empty, empty <= 6000, `${round(empty / 1000, 2)} s`);
    const rss = m.memory?.peak ? round(m.memory.peak.rss / MiB) : null;
    const pss = m.memory?.peak ? round(m.memory.peak.pss / MiB) : null;
    line("tree RSS sum ≤ 500 MiB (peak)", rss, rss <= 500, `${rss} MiB`);
    line("tree PSS sum ≤ 500 MiB (peak)", pss, pss <= 500, `${pss} MiB`);
  } else {
    line("hot list ≥ 0.3× express", hotRatio, hotRatio >= 0.3, x(hotRatio));
    line("votes ≥ 0.1× raw upsert", voteRatio, voteRatio >= 0.1, x(voteRatio));
    line("contended votes ≥ 0.1× raw upsert on the same posts", contended, contended >= 0.1, x(contended));
  }
  line(
    "vote tallies exact",
    tally ? tally.exact : null,
    tally?.exact === tally?.posts,
    tally ? `${tally.exact}/${tally.posts} posts` : "",
  );
  const ct = m.votesContended?.tally;
  line(
    "contended vote tallies exact",
    ct ? ct.exact : null,
    ct?.exact === ct?.posts,
    ct ? `${ct.exact}/${ct.posts} posts` : "",
  );
  const big = count(m.scale?.at1M?.posts ?? 1e6);
  const small = count(m.scale?.at10k?.posts ?? 1e4);
  const first = ratio(m.scale?.at1M?.first?.p99, m.scale?.at10k?.first?.p99);
  line(`hot list p99 at ${big} ≤ 1.5× at ${small}`, first, first <= 1.5, x(first));
  // Not a goal of the issue: random deep pages also measure how much of the table fits in memory.
  const deep = ratio(m.scale?.at1M?.deep?.p99, m.scale?.at10k?.deep?.p99);
  out.push({
    goal: `(info) random keyset pages: p99 at ${big} ÷ at ${small}`,
    value: deep,
    pass: null,
    info: true,
    shown: deep == null ? "n/a" : x(deep),
  });
  return out;
}

/** `812 req/s · p50 55 ms · p99 120 ms` (+ failures if any). */
function fmtLoad(r, unit = "req/s") {
  if (!r) return "n/a";
  const bad =
    r.non2xx || r.errors || r.timeouts ? ` (non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts})` : "";
  return `${r.reqPerSec.toLocaleString("en")} ${unit} · p50 ${r.p50} ms · p99 ${r.p99} ms${bad}`;
}
const fmtX = (v) => (v == null ? "n/a" : `${v}×`);
const fmtMem = (m) =>
  m
    ? `RSS ${round(m.rss / MiB)} MiB · PSS ${round(m.pss / MiB)} MiB (${m.processes} process${m.processes === 1 ? "" : "es"})`
    : "n/a";
const fmtS = (ms) => `${round(ms / 1000, 2)} s`;
const fmtSettle = (q) =>
  q
    ? q.quiet
      ? `busy in the background for ${fmtS(q.quietAfterMs)}`
      : `still busy in the background after ${fmtS(q.quietAfterMs)} (gave up waiting)`
    : "";

/**
 * The markdown report of one mode: measurements (each beside its baseline) and goal lines.
 * @param {any} m one mode's result
 */
export function modeMarkdown(m) {
  const L = [];
  L.push(`### ${m.title}`, "");
  if (m.error) L.push(`**Failed:** ${m.error}`, "");
  if (m.sqlNote) L.push(`_${m.sqlNote}_`, "");
  const reads = [];
  for (const [k, label] of [
    ["hot", "`GET /v1/posts?sort=hot&limit=25`"],
    ["post", "`GET /v1/posts/{id}`"],
  ]) {
    const r = m.reads?.[k];
    if (!r) continue;
    reads.push(
      `| ${label} (${r.note}) | ${fmtLoad(r.aps)} | ${fmtLoad(r.express)} | ${fmtLoad(r.bare)} | ${fmtX(ratio(r.aps.reqPerSec, r.express.reqPerSec))} | ${fmtX(ratio(r.aps.reqPerSec, r.bare.reqPerSec))} |`,
    );
  }
  if (reads.length)
    L.push(
      "| measure | APS | minimal express 5 | bare node:http | APS ÷ express | APS ÷ bare |",
      "|---|---|---|---|---|---|",
      ...reads,
      "",
    );
  const rows = [];
  for (const [v, what] of [
    [m.votes, "random agent/post/±1"],
    [m.votesContended, `contended: ${m.votesContended?.agents} agents on ${m.votesContended?.posts} posts`],
  ]) {
    if (!v?.tally) continue;
    rows.push(
      `| \`POST /v1/posts/{id}/vote\` (${what}) | ${fmtLoad(v.aps, "votes/s")} | raw \`INSERT … ON CONFLICT DO UPDATE\`${v.rawUpsert && v.rawUpsert.concurrency !== v.connections ? ` (${v.rawUpsert.concurrency} connections: max_connections)` : ""}: ${v.rawUpsert ? fmtLoad(v.rawUpsert, "upserts/s") : `n/a (${v.rawUpsertNote})`} | ${fmtX(ratio(v.aps.reqPerSec, v.rawUpsert?.reqPerSec))} |`,
    );
    if (v.cpuMsPerVote)
      rows.push(
        `| CPU ms per vote (${what.split(":")[0]}; docs/design/tests.md#mixed-load-bench) | ${Object.entries(
          v.cpuMsPerVote,
        )
          .map(([k, ms]) => `${k} ${ms}`)
          .join(
            ", ",
          )} | ${v.rawUpsert?.postgresCpuMsPerUpsert != null ? `postgres ${v.rawUpsert.postgresCpuMsPerUpsert} per upsert` : ""} | |`,
      );
    const t = v.tally;
    rows.push(
      `| vote tallies vs the bench's own record (${what.split(":")[0]}) | ${t.exact}/${t.posts} posts exact (${v.pairs.toLocaleString("en")} agent×post votes; ${v.settled} re-sent after the load; ${v.rejected} 4xx; checked in ${t.waitedMs} ms) | | |`,
    );
  }
  for (const [k, label] of [
    ["empty", "empty"],
    ["existing", "existing"],
  ]) {
    const st = m.start?.[k];
    if (st)
      rows.push(
        `| start to ready, ${label} data | "APS ready at" ${fmtS(st.lineMs)} · /readyz 200 ${fmtS(st.readyzMs)} | | |`,
      );
  }
  if (m.memory?.idle) rows.push(`| memory of the process tree, idle after start | ${fmtMem(m.memory.idle)} | | |`);
  if (m.memory?.peak)
    rows.push(`| memory of the process tree, peak under reads and votes | ${fmtMem(m.memory.peak)} | | |`);
  const s = m.scale;
  if (s?.skipped) rows.push(`| hot list at 10k vs 1M posts (SQL-seeded) | skipped: ${s.skipped} | | |`);
  else if (s?.at10k && s?.at1M) {
    const big = count(s.at1M.posts);
    const small = count(s.at10k.posts);
    for (const [k, label] of [
      ["first", "first page"],
      ["deep", "random keyset page (cursor)"],
    ]) {
      rows.push(
        `| hot list ${label} at ${big} posts | ${fmtLoad(s.at1M[k])} | same at ${small} posts: ${fmtLoad(s.at10k[k])} | p99: ${fmtX(ratio(s.at1M[k].p99, s.at10k[k].p99))} |`,
      );
    }
    rows.push(
      `| posts seeded in SQL | to ${small}: ${s.at10k.seed.inserted.toLocaleString("en")} rows in ${s.at10k.seed.seconds} s · to ${big}: ${s.at1M.seed.inserted.toLocaleString("en")} rows in ${s.at1M.seed.seconds} s · tree at ${big}: ${fmtMem(s.at1M.memory)} | | |`,
    );
    const r = s.restart;
    if (r)
      rows.push(
        `| restart with ${big} posts | ready in ${fmtS(Math.max(r.lineMs, r.readyzMs))}, then ${fmtSettle(r.settle)} · tree ${fmtMem(r.memory)} | | |`,
      );
  }
  if (rows.length) L.push("| measure | APS | baseline | APS ÷ baseline |", "|---|---|---|---|", ...rows, "");
  L.push("| goal (docs/performance.md) | value | result |", "|---|---|---|");
  for (const g of m.goals ?? [])
    L.push(`| ${g.goal} | ${g.shown} | ${g.info ? "info" : g.pass == null ? "n/a" : g.pass ? "PASS" : "**FAIL**"} |`);
  if (s?.explain) {
    L.push(
      "",
      `<details><summary>EXPLAIN ANALYZE of the hot list at ${count(s.at1M.posts)} posts (hot index used: first page ${s.explain.firstPage.usesHotIndex}, deep page ${s.explain.deepPage.usesHotIndex})</summary>`,
      "",
      "```",
      s.explain.firstPage.plan,
      "",
      s.explain.deepPage.plan,
      "```",
      "</details>",
    );
  }
  return L.join("\n");
}
