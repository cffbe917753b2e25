// Cleanup stack of the bench: every resource it creates (child processes, temp folders, databases,
// NATS streams) registers an undo step here; they run last-in first-out on normal exit, on failure
// and on SIGINT/SIGTERM, so a run leaves nothing behind (docs/performance.md).

/** @type {{ label: string, fn: () => Promise<void> | void }[]} */
const steps = [];
/** @type {Promise<void> | null} */
let cleaning = null;

let signalled = false;

/** True once SIGINT/SIGTERM arrived (the run is being abandoned: report nothing). */
export function wasSignalled() {
  return signalled;
}

/** True once cleanup has begun (after a signal or at the end): start nothing new. */
export function cleanupStarted() {
  return cleaning !== null;
}

/**
 * Registers `fn` to run at cleanup; returns a function that runs it now (once) and unregisters it.
 * A step registered while cleanup runs is still run by it.
 * @param {string} label what is undone (printed when the step fails)
 * @param {() => Promise<void> | void} fn
 */
export function onCleanup(label, fn) {
  const step = { label, fn };
  steps.push(step);
  return async () => {
    const i = steps.indexOf(step);
    if (i < 0) return;
    steps.splice(i, 1);
    await fn();
  };
}

/**
 * Runs every registered step (last first); a failing step is reported and the others still run.
 * Every caller gets the same promise: a second call waits for the cleanup under way.
 */
export function cleanupAll() {
  cleaning ??= (async () => {
    while (steps.length) {
      const { label, fn } = steps.pop();
      try {
        await fn();
      } catch (err) {
        console.error(`bench cleanup: ${label} failed: ${err?.message ?? err}`);
      }
    }
  })();
  return cleaning;
}

/**
 * On SIGINT/SIGTERM: cleans up, then exits 130/143 (a second signal exits at once). On an
 * uncaught error: prints it, cleans up, exits 1.
 */
export function cleanupOnSignalsAndCrashes() {
  for (const [sig, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ]) {
    process.once(sig, () => {
      process.once(sig, () => process.exit(code));
      signalled = true;
      console.error(`\nbench: ${sig}, cleaning up…`);
      cleanupAll().finally(() => process.exit(code));
    });
  }
  const crash = (err) => {
    console.error("bench: uncaught error:", err);
    cleanupAll().finally(() => process.exit(1));
  };
  process.on("uncaughtException", crash);
  process.on("unhandledRejection", crash);
}
