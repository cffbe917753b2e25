// npm run openapi:lint — writes the gateway's OpenAPI document (built from its zod schemas, the
// same one GET /v1/openapi.json serves) to a temporary file and lints it with Redocly's
// recommended rules (redocly.yaml); any error fails (docs/design/edge.md#the-openapi-document). Needs the built gateway.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildOpenApi } from "@aps/api/openapi/document";
import { loadSkill } from "@aps/gateway/skill";

const dir = mkdtempSync(join(tmpdir(), "aps-openapi-"));
try {
  const file = join(dir, "openapi.json");
  writeFileSync(file, JSON.stringify(buildOpenApi(loadSkill().version).document, null, 2));
  const r = spawnSync("npx", ["--no-install", "redocly", "lint", "--config", "redocly.yaml", file], {
    stdio: "inherit",
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
  });
  process.exitCode = r.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
