/** Prefix of every API key of a live instance (seed "Agent identity"). */
export const LIVE_KEY_PREFIX = "sk_src_";

/** Prefix of every API key of a sandbox instance (docs/design/agents.md#sandbox): the live gateway sends requests bearing one to the sandbox. */
export const TEST_KEY_PREFIX = "sk_test_";

/** The prefix of the keys an instance issues: `sk_src_` when `livemode`, else `sk_test_` (docs/design/agents.md#sandbox). */
export function apiKeyPrefix(livemode: boolean): string {
  return livemode ? LIVE_KEY_PREFIX : TEST_KEY_PREFIX;
}
