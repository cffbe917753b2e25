import { waitUntil, type WaitOptions } from "@aps/testkit";

/** Options of {@link waitStrictly}: waitUntil's, and what to show of the last look when the wait times out. */
export interface StrictWaitOptions extends WaitOptions {
  /** What the condition last saw (an inbox, a list), added to the timeout's message as JSON. */
  show?: () => unknown;
}

/**
 * `waitUntil` (@aps/testkit, docs/design/tests.md "Waiting") for a condition whose errors are failures,
 * not "not yet": resolves with the condition's first truthy result, looking every `intervalMs`;
 * an error the condition throws — a failed expectation, a status that is not the one expected, a
 * body of the wrong shape — fails the wait at once (waitUntil alone would look again, which would
 * retry a failed assertion). Times out like waitUntil, naming `what` and, with `show`, what the
 * condition last saw.
 */
export async function waitStrictly<T>(
  what: string,
  condition: () => T | Promise<T>,
  { show, ...opts }: StrictWaitOptions = {},
): Promise<NonNullable<T>> {
  let failure: { err: unknown } | undefined;
  let value: NonNullable<T> | undefined;
  try {
    await waitUntil(
      what,
      async () => {
        try {
          const v = await condition();
          if (v) value = v;
          return Boolean(v);
        } catch (err) {
          failure = { err };
          return true;
        }
      },
      opts,
    );
  } catch (err) {
    if (!show) throw err;
    throw new Error(`${(err as Error).message}; last seen: ${JSON.stringify(show())?.slice(0, 4_000)}`, { cause: err });
  }
  if (failure) throw failure.err;
  return value!;
}
