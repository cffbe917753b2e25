// Process trees on Linux, from /proc: the descendants of a pid (by the ppid field of
// /proc/<pid>/stat, which works without CONFIG_PROC_CHILDREN) and their memory.
// RSS (VmRSS of /proc/<pid>/status) counts every resident page a process maps, so shared pages
// (PostgreSQL's shared buffers, the node binary, shared libraries) are counted once per process
// in a sum; PSS (`Pss:` of /proc/<pid>/smaps_rollup) divides each shared page among the
// processes sharing it, so a PSS sum is the tree's real footprint (docs/design/tests.md#benchmarks).
import { readdirSync, readFileSync } from "node:fs";

/**
 * `{ ppid, start }` of a pid from /proc/<pid>/stat (`start`: clock ticks after boot, which tells a
 * reused pid apart), or null when the process is gone.
 * @param {number} pid
 */
export function statOf(pid) {
  let s;
  try {
    s = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last ')'.
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return { ppid: Number(f[1]), start: Number(f[19]) };
}

/**
 * The pids of `root` and all its living descendants, root first.
 * @param {number} root
 * @returns {number[]}
 */
export function treePids(root) {
  const children = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const st = statOf(Number(name));
    if (!st) continue;
    if (!children.has(st.ppid)) children.set(st.ppid, []);
    children.get(st.ppid).push(Number(name));
  }
  if (!statOf(root)) return [];
  const out = [root];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]) ?? []));
  return out;
}

/** A `Field:   123 kB` value of a /proc file in bytes, or 0 when absent/unreadable. */
function kbField(path, field) {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(path, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Memory of the whole tree under `root`, in bytes: `rss` = sum of VmRSS (double-counts shared
 * pages), `pss` = sum of Pss from smaps_rollup (shared pages split), `processes` = how many.
 * @param {number} root
 * @returns {{ rss: number, pss: number, processes: number }}
 */
export function treeMemory(root) {
  let rss = 0;
  let pss = 0;
  const pids = treePids(root);
  for (const pid of pids) {
    rss += kbField(`/proc/${pid}/status`, "VmRSS");
    pss += kbField(`/proc/${pid}/smaps_rollup`, "Pss");
  }
  return { rss, pss, processes: pids.length };
}

/**
 * Samples `treeMemory(root)` every `everyMs` until stopped; `stop()` returns the peak of each sum
 * (not necessarily from the same sample) and the last sample.
 * @param {number} root
 * @param {number} [everyMs]
 */
export function sampleTreeMemory(root, everyMs = 1000) {
  const peak = { rss: 0, pss: 0, processes: 0 };
  let last = treeMemory(root);
  const take = () => {
    last = treeMemory(root);
    peak.rss = Math.max(peak.rss, last.rss);
    peak.pss = Math.max(peak.pss, last.pss);
    peak.processes = Math.max(peak.processes, last.processes);
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return { peak: { ...peak }, last };
    },
  };
}

/** Clock ticks per second of /proc/<pid>/stat times (`getconf CLK_TCK`; 100 on Linux x86-64 and arm64). */
const CLK_TCK = 100;

/**
 * CPU seconds (user + system) of `pid` and, with `reaped`, of the exited children it has waited
 * for (cutime + cstime); 0 when it is gone.
 * @param {number} pid
 * @param {boolean} [reaped]
 */
export function cpuSecondsOf(pid, reaped = false) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    // utime, stime, cutime, cstime: fields 14–17 of proc(5)
    return (Number(f[11]) + Number(f[12]) + (reaped ? Number(f[13]) + Number(f[14]) : 0)) / CLK_TCK;
  } catch {
    return 0; // exited meanwhile
  }
}

/**
 * CPU seconds (user + system) used so far by the tree under `root`: its living processes and the
 * children they have reaped, so that a process which ended in between still counts (a PostgreSQL
 * backend that ended counts in its postmaster's cutime). A difference of two calls is the tree's
 * CPU in between, up to a child that ended but is not reaped yet.
 */
export function treeCpuSeconds(root) {
  return treePids(root).reduce((sum, pid) => sum + cpuSecondsOf(pid, true), 0);
}

/**
 * Waits until the tree under `root` is quiet: its CPU use averaged over the last `windowMs` is
 * below `cores` (e.g. 0.25 = a quarter of one core), i.e. background work after a start or a
 * seeding (a search index rebuilt from every post, an outbox backlog) is done. Gives up after
 * `maxMs`. Returns `{ quietAfterMs, quiet }` (`quiet` false when it gave up).
 * @param {number} root
 * @param {{ cores?: number, windowMs?: number, maxMs?: number }} [o] defaults 0.25 cores, 8000 ms, 240000 ms
 */
export async function waitQuiet(root, o = {}) {
  const cores = o.cores ?? 0.25;
  // 8 s: a job paced by round trips to a busy shared server can idle for a few seconds at a time.
  const windowMs = o.windowMs ?? 8000;
  const maxMs = o.maxMs ?? 240_000;
  const t0 = performance.now();
  const samples = [{ t: t0, cpu: treeCpuSeconds(root) }];
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    const now = performance.now();
    samples.push({ t: now, cpu: treeCpuSeconds(root) });
    while (samples.length > 2 && now - samples[1].t >= windowMs) samples.shift();
    const first = samples[0];
    if (now - first.t >= windowMs && (samples.at(-1).cpu - first.cpu) / ((now - first.t) / 1000) < cores) {
      return { quietAfterMs: Math.round(now - t0), quiet: true };
    }
    if (now - t0 > maxMs) return { quietAfterMs: Math.round(now - t0), quiet: false };
  }
}
