import { httpClient } from "@aps/testkit";
import { notificationsSuite, NOTIFICATIONS_ENV } from "./suites/notifications.js";
import { shareSystem } from "../support/shared-system.js";
import { routeModes, startSystem, type System } from "../support/system.js";

/**
 * The agents' events, inbox and webhooks (test/e2e/suites/notifications.ts: a scripted discussion
 * against an independent model of the rules; webhooks to real receivers) in the process modes that
 * add coverage (docs/design/tests.md#test-tiers "Run modes"), a system of its own in each; and the webhook SSRF guard
 * without WEBHOOK_ALLOW_PRIVATE. Its container modes run in test/e2e/image.test.ts, on the system
 * it shares with the API suite (docs/design/tests.md#container-systems).
 */
const modes = await routeModes("notifications.test.ts");
const TIMEOUT_MS = 240_000;

for (const mode of modes) notificationsSuite(shareSystem(mode, { env: NOTIFICATIONS_ENV }).host());

describe("webhook SSRF guard without WEBHOOK_ALLOW_PRIVATE (embedded)", () => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  beforeAll(async () => {
    sys = await startSystem("embedded");
    req = httpClient(sys.baseUrl);
  }, TIMEOUT_MS);
  afterAll(async () => {
    await sys?.stop();
  });

  it.each([
    "https://127.0.0.1/hook",
    "https://10.0.0.1/hook",
    "https://169.254.169.254/latest/meta-data/",
    "https://localhost/hook",
    "https://[::1]/hook",
    "http://example.com/hook",
  ])("refuses %s with 400 and registers nothing", async (url) => {
    const r = await req("POST", "/join", { body: { name: "ssrf" } });
    const key = r.body.apiKey as string;
    const c = await req("POST", "/me/webhooks", { key, body: { url, events: ["*"] } });
    expect([c.status, c.body.code]).toEqual([400, "invalid_request"]);
    expect((await req("GET", "/me/webhooks", { key })).body.items).toEqual([]);
  });
});
