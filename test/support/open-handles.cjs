/**
 * jest `globalTeardown`: names what is still open once every test file has finished — sockets
 * (local and remote address), servers (their port), child processes (their command line), and
 * counts of other resources (timers, file handles) — so a test that forgets to close something is
 * found by its name in the CI log instead of by a run that never ends (docs/design/tests.md#open-handles-and-the-end-of-a-run).
 *
 * The suite runs in band (jest.config.js `maxWorkers: 1`), so the handles of the test files live
 * in this process. What jest itself keeps open (its stdio, the reporter's pipes) is left out.
 * Prints to stderr; returns nothing; never throws.
 */
module.exports = async function openHandles() {
  // Give closes that were started but not awaited (sockets ending, children exiting) a moment:
  // until nothing is left to name, at most 1 s (stretched on a loaded machine).
  try {
    const { waitUntil } = await import("@aps/testkit/wait");
    await waitUntil("the handles left open to close", () => openHandleLines().length === 0, {
      timeoutMs: 1_000,
      intervalMs: 50,
    });
  } catch {
    // still open after it: named below
  }
  const lines = openHandleLines();
  const others = (process.getActiveResourcesInfo?.() ?? []).filter((r) => r !== "TTYWrap" && r !== "PipeWrap");
  const counts = {};
  for (const r of others) counts[r] = (counts[r] ?? 0) + 1;
  if (lines.length === 0) return;
  process.stderr.write(
    `\n⚠️  open after the last test file (a test did not close it):\n${lines.map((l) => `  - ${l}`).join("\n")}\n` +
      `  resources: ${JSON.stringify(counts)}\n`,
  );
};

/** One line for each handle a test left open (jest's own stdio and pipes left out). */
function openHandleLines() {
  const lines = [];
  for (const h of process._getActiveHandles?.() ?? []) {
    const kind = h?.constructor?.name ?? typeof h;
    if (h === process.stdin || h === process.stdout || h === process.stderr) continue;
    if (kind === "Socket" || kind === "TLSSocket") {
      if (h.fd === 0 || h.fd === 1 || h.fd === 2 || h._isStdio) continue;
      if (!h.remoteAddress && !h.localPort) continue; // a pipe (jest's own, a child's stdio)
      lines.push(
        `${kind} ${h.localAddress ?? ""}:${h.localPort ?? ""} -> ${h.remoteAddress ?? ""}:${h.remotePort ?? ""}`,
      );
    } else if (kind === "Server") {
      const a = h.address?.();
      lines.push(`Server listening on ${typeof a === "string" ? a : a ? `${a.address}:${a.port}` : "?"}`);
    } else if (kind === "ChildProcess") {
      lines.push(`ChildProcess pid ${h.pid}: ${(h.spawnargs ?? []).join(" ").slice(0, 200)}`);
    } else {
      lines.push(kind);
    }
  }
  return lines;
}
