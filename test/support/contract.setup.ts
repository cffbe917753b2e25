/**
 * Contract conformance over every cross-service suite (docs/design/edge.md#contract-checks): in each test file
 * under test/, `fetch` is routed through the OpenAPI validator of @aps/testkit (contract-fetch.ts)
 * over the document the built gateway serves at /v1/openapi.json. Every request to an APS origin
 * (one started by test/support/system.ts or given to `httpClient`) is validated, request and
 * answer. A test fails when an answer it received disagrees with the document (afterEach); a
 * request the document refuses is a deliberate bad input when the gateway refused it (4xx), and a
 * response violation when it was accepted. The file's tally is printed after its last test and,
 * when APS_CONTRACT_LOG names a file, appended to it as one JSON line.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { contractTally, installContractCheck } from "@aps/testkit";

/**
 * The gateway's OpenAPI document: read from `APS_TEST_OPENAPI_FILE`, which test/support/global-setup.cjs
 * writes once per run from the built gateway (built once, not in each of the ~75 files),
 * or built here from the gateway's module when the variable is unset (e.g. a run from sources).
 */
async function openApiDocument(): Promise<object> {
  const file = process.env.APS_TEST_OPENAPI_FILE;
  if (file) return JSON.parse(readFileSync(file, "utf8")) as object;
  const { buildOpenApi } = await import("@aps/api/openapi/document");
  const { loadSkill } = await import("@aps/gateway/skill");
  return buildOpenApi(loadSkill().version).document;
}

const testPath = expect.getState().testPath ?? "";
const root = new URL("../../", import.meta.url).pathname;
const rel = relative(root, testPath);

if (rel.startsWith("test/")) {
  installContractCheck(await openApiDocument());
  let seen = 0;
  afterEach(() => {
    const tally = contractTally()!;
    const fresh = tally.responseViolations.slice(seen);
    seen = tally.responseViolations.length;
    if (fresh.length > 0)
      throw new Error(
        `answers that disagree with /v1/openapi.json (docs/design/edge.md#contract-checks):\n${fresh
          .map((v) => `  ${v.method} ${v.path.slice(0, 160)} → ${v.status}: ${v.problem}`)
          .join("\n")}`,
      );
  });
  afterAll(() => {
    const t = contractTally()!;
    const refused = t.requestViolations.filter((v) => v.status >= 400 && v.status < 500).length;
    const line = {
      file: rel,
      validated: t.validated,
      responseViolations: t.responseViolations.length,
      requestViolations: t.requestViolations.length,
      requestViolationsRefused: refused,
      skipped: t.skipped,
    };
    if (t.validated > 0)
      console.log(
        `contract: ${rel}: ${t.validated} requests validated; ${t.responseViolations.length} response violations; ${t.requestViolations.length} request violations (deliberate bad input, ${refused} refused with a 4xx)`,
      );
    if (process.env.APS_CONTRACT_LOG) appendFileSync(process.env.APS_CONTRACT_LOG, JSON.stringify(line) + "\n");
  });
}
