import { apiSuite, API_ENV } from "./suites/api.js";
import { shareSystem } from "../support/shared-system.js";
import { routeModes } from "../support/system.js";

/**
 * The API suite (test/e2e/suites/api.ts: several agents drive every endpoint of the foundation) in
 * the process modes that add coverage (docs/design/tests.md#test-tiers "Run modes"): the all-in-one in jest and, on
 * real PostgreSQL + NATS, the multi-process topology of deploy/local — a system of its own in each.
 * Its container modes (the all-in-one and the topology from the image) run in
 * test/e2e/image.test.ts, on the system the notifications suite shares (docs/design/tests.md#container-systems).
 */
const SUITE = "agent API end to end";
const modes = await routeModes(SUITE);

for (const mode of modes) apiSuite(shareSystem(mode, { env: API_ENV }).host());
if (modes.length === 0)
  describe.skip(`${SUITE}: SKIPPED, APS_TEST_MODES names no process mode (container modes: test/e2e/image.test.ts)`, () => {
    it("runs nothing", () => undefined);
  });
