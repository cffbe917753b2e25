import { containerImages } from "@aps/testkit";
import { apiSuite, API_ENV } from "./suites/api.js";
import { notificationsSuite, NOTIFICATIONS_ENV } from "./suites/notifications.js";
import { shareSystem, type SharedSystem } from "../support/shared-system.js";
import { imageModes } from "../support/system.js";

/**
 * The image's route suites (docs/design/tests.md#container-systems): the API suite (every seed route) and the notifications
 * suite (the service added since, with its egress and own database role) against the APS image
 * (`APS_TEST_IMAGE`) — the all-in-one in one container, and the distributed topology in
 * containers (docs/design/operations.md#the-image). Their process modes are test/e2e/api.test.ts and
 * test/e2e/notifications.test.ts.
 *
 * Per container mode, ONE system (one container, or one topology of PostgreSQL, NATS and a
 * container per service) started with the env of both suites, and both suites run against it one
 * after the other, instead of a system per suite: starting and stopping a system is most of what a
 * container mode costs (docs/design/tests.md#container-systems). The API suite comes first: some of its checks read whole
 * lists and need a system no other suite wrote to; the notifications suite checks the feed from
 * where it starts and the inboxes of its own agents. The tests keep their names
 * ("agent API end to end (aio-container) …", "events, inbox and webhooks (distributed-containers) …").
 *
 *   npm test -- test/e2e/image.test.ts                       both suites in both container modes
 *   npm test -- test/e2e/image.test.ts -t "agent API"        the API suite alone
 *   APS_TEST_MODES=aio-container npm test -- test/e2e/image.test.ts
 */
const SUITE = "the API and notifications suites in the image's containers";
const modes = imageModes(SUITE);

/** The env of the suites together; a variable two suites set differently is a mistake to fix, not to pick from. */
function unionEnv(...envs: Record<string, string>[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const env of envs)
    for (const [k, v] of Object.entries(env)) {
      if (k in out && out[k] !== v) throw new Error(`${SUITE}: ${k} is ${out[k]} for one suite and ${v} for another`);
      out[k] = v;
    }
  return out;
}
const env = unionEnv(API_ENV, NOTIFICATIONS_ENV);

const systems: SharedSystem[] = [];
for (const mode of modes) {
  const shared = shareSystem(mode, { env });
  systems.push(shared);
  apiSuite(shared.host());
  notificationsSuite(shared.host());
}
if (modes.length === 0) {
  // jest prints no console output of a file whose every test skipped: the reason goes in the name
  const images = containerImages();
  const why =
    "missing" in images ? images.missing : `APS_TEST_MODES=${process.env.APS_TEST_MODES} names no container mode`;
  describe.skip(`${SUITE}: SKIPPED, ${why}`, () => {
    it("runs nothing", () => undefined);
  });
}

// The last suite of a mode stops its system; a run filtered with -t skips the hooks of the suites
// it leaves out, so whatever still runs stops here. Then one line per mode: what starting and
// stopping its system cost, the cost this file pays once instead of once per suite.
afterAll(async () => {
  await Promise.all(systems.map((s) => s.stop()));
  for (const s of systems)
    console.log(
      `[image.test] ${s.mode}: system started in ${s.timings.startS?.toFixed(1) ?? "-"} s, stopped in ${s.timings.stopS?.toFixed(1) ?? "-"} s`,
    );
}, 120_000);
