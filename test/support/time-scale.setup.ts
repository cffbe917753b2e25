/**
 * Stretches every explicit jest time limit by TEST_TIME_SCALE (docs/design/tests.md "Waiting"): the third
 * argument of `it`/`test` (also `.only`, `.failing`, `.concurrent`) and the second of
 * `beforeAll`/`afterAll`/`beforeEach`/`afterEach` — bounds on a hang, never claims about speed,
 * so a loaded machine gets more time and the same assertions. jest.config.js stretches the default
 * the same way. With `auto`, the load per core is read once, as the file starts, and counts at least 2
 * (the load rises after it). Tests pass their limits as they are, never through `scaled()`.
 */
import { timeScale } from "@aps/testkit";

const scale = process.env.TEST_TIME_SCALE?.trim() === "auto" ? Math.max(2, timeScale()) : timeScale();

if (scale > 1) {
  const stretch = (ms: unknown) => (typeof ms === "number" && ms > 0 ? Math.round(ms * scale) : ms);
  /** `f` with its argument at `at` stretched; its properties (`.only`, `.each`, `.skip`…) kept, each wrapped too. */
  const wrap = <F extends (...args: never[]) => unknown>(f: F, at: number, members: string[] = []): F =>
    new Proxy(f, {
      apply: (target, self, args: unknown[]) => {
        if (args.length > at) args[at] = stretch(args[at]);
        return Reflect.apply(target, self, args) as unknown;
      },
      get: (target, key, receiver) => {
        const v = Reflect.get(target, key, receiver) as unknown;
        return typeof key === "string" && members.includes(key) && typeof v === "function" ? wrap(v as F, at) : v;
      },
    });
  const g = globalThis as unknown as Record<string, (...args: never[]) => unknown>;
  for (const name of ["it", "test"]) g[name] = wrap(g[name]!, 2, ["only", "failing", "concurrent"]);
  for (const name of ["beforeAll", "afterAll", "beforeEach", "afterEach"]) g[name] = wrap(g[name]!, 1);
}
