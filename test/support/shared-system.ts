import { startSystem, type Mode, type System, type SystemOptions } from "./system.js";

/**
 * What a suite body (test/e2e/suites/) gets to run against: it calls `start()` in its `beforeAll`
 * and `done()` in its `afterAll`, and never starts or stops a system itself. Whoever declares the
 * suite decides whether the system is its own or shared with other suites (docs/design/tests.md#container-systems).
 */
export interface SuiteHost {
  mode: Mode;
  /** The running system, started by the first suite that asks for it. */
  start(): Promise<System>;
  /** This suite is finished with the system: it stops once every suite declared on it is. */
  done(): Promise<void>;
}

/** One system for the suites of a file in one mode (docs/design/tests.md#container-systems). */
export interface SharedSystem {
  mode: Mode;
  /** A host for one more suite; call it while declaring that suite (it counts the suites). */
  host(): SuiteHost;
  /** Stops the system if it still runs (for the file's `afterAll`: a `-t` filter skips the hooks of filtered-out suites). */
  stop(): Promise<void>;
  /** Seconds the start and the stop took (undefined until they happened). */
  timings: { startS?: number; stopS?: number };
}

/**
 * One system in `mode` started with `opts` for every suite that takes a `host()` of it: started by
 * the first suite's `beforeAll` (later ones get the same system, or the same start error), stopped
 * by the `afterAll` of the last suite declared on it. Jest runs a file's `describe` blocks one
 * after another in the order they were declared, so the suites never overlap; the first one
 * declared sees a fresh system.
 */
export function shareSystem(mode: Mode, opts: SystemOptions = {}): SharedSystem {
  let users = 0;
  let finished = 0;
  let starting: Promise<System> | undefined;
  let stopping: Promise<void> | undefined;
  const timings: SharedSystem["timings"] = {};
  const start = () => {
    if (stopping)
      throw new Error(`the shared ${mode} system was stopped: a suite asked for it after the last one ended`);
    starting ??= (async () => {
      const t0 = Date.now();
      const sys = await startSystem(mode, opts);
      timings.startS = (Date.now() - t0) / 1000;
      return sys;
    })();
    return starting;
  };
  const stop = () => {
    stopping ??= (async () => {
      const sys = await starting?.catch(() => undefined);
      if (!sys) return;
      const t0 = Date.now();
      await sys.stop();
      timings.stopS = (Date.now() - t0) / 1000;
    })();
    return stopping;
  };
  return {
    mode,
    timings,
    stop,
    host: () => {
      users++;
      let isDone = false;
      return {
        mode,
        start,
        done: async () => {
          if (isDone) return;
          isDone = true;
          if (++finished === users) await stop();
        },
      };
    },
  };
}
