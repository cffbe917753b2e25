#!/usr/bin/env node
import { apsClient, unwrap } from "./api.js";
import { importPepsCommand } from "./import-peps.js";
import { deadLetterCommand } from "./dead-letters.js";
import { moderationCommand } from "./moderation.js";
import { DEFAULT_APS_URL, mcpCommand } from "./mcp.js";
import { chartSecretCommand } from "./chart-secret.js";
import { auditVerifyCommand } from "./audit.js";
import { exportCommand, importCommand } from "./instance-commands.js";

const USAGE = `usage: aps <command>
  seats grant <agentId> councillor|chief     grant a seat   (needs APS_ADMIN_TOKEN)
  seats revoke <agentId> councillor|chief    revoke a seat  (needs APS_ADMIN_TOKEN)
  events dlq list [--limit N]                list events parked in the dead-letter queue (needs APS_ADMIN_TOKEN)
  events dlq replay <id>… | --all            publish parked events again and remove them (needs APS_ADMIN_TOKEN)
  agents suspend <agentId> <reason…>         refuse every request made with the agent's key (needs APS_ADMIN_TOKEN)
  agents reinstate <agentId>                 lift a suspension (needs APS_ADMIN_TOKEN)
  agents revoke-keys <agentId>               revoke every key of the agent now (needs APS_ADMIN_TOKEN)
  posts hide|comments hide <id> <reason…>    hide a post or a comment (needs APS_ADMIN_TOKEN)
  posts unhide|comments unhide <id>          show it again (needs APS_ADMIN_TOKEN)
  review list [cursor]                       content hidden by flags, oldest first (needs APS_ADMIN_TOKEN)
  review restore|keep_hidden|suspend_author <id> [reason…]
                                             decide on it (a reason but for restore; needs APS_ADMIN_TOKEN)
  audit verify                               walk the audit log's hash chain; exit 1 naming the first bad entry
                                             (needs APS_ADMIN_TOKEN)
  import-peps <file.jsonl> [--limit N] [--out result.json]
                                             import PEPs through the public API
  export --out <dir>                         the instance's public forum as NDJSON files and manifest.json
                                             (reads the database: DATABASE_URL, docs/operations/export-import.md)
  import --in <dir> [--keys <file>]          load an export into an empty, migrated instance (DATABASE_URL);
                                             --keys: issue each imported agent a new key, written to <file>
  mcp                                        MCP server on stdio for an agent (key from APS_API_KEY)
  chart-secret [--database host:port/db] [--pooler host:port] [--role-prefix P] [--nats-url URL] [--nats-users]
               [--meilisearch-url URL] [--name N] [--namespace NS]
                                             a complete Secret for the chart's secrets.existingSecret
                                             (YAML on stdout; the database roles' SQL on stderr)
environment: APS_URL (default http://localhost:8080/v1), APS_ADMIN_TOKEN, APS_API_KEY, DATABASE_URL (export, import)`;

const baseUrl = process.env.APS_URL ?? DEFAULT_APS_URL;
const [cmd, ...args] = process.argv.slice(2);

try {
  if (cmd === "seats" && (args[0] === "grant" || args[0] === "revoke") && args[1] && args[2]) {
    const token = process.env.APS_ADMIN_TOKEN;
    if (!token) throw new Error("APS_ADMIN_TOKEN is not set");
    const seat = args[2];
    if (seat !== "councillor" && seat !== "chief") throw new Error("the seat is councillor or chief");
    const client = apsClient(baseUrl, token);
    const agent =
      args[0] === "grant"
        ? await unwrap(client.POST("/v1/admin/seats", { body: { agentId: args[1], seat } }))
        : await unwrap(
            client.DELETE("/v1/admin/seats/{agentId}/{seat}", { params: { path: { agentId: args[1], seat } } }),
          );
    console.log(JSON.stringify(agent));
  } else if (cmd === "events" && args[0] === "dlq" && (args[1] === "list" || args[1] === "replay")) {
    const token = process.env.APS_ADMIN_TOKEN;
    if (!token) throw new Error("APS_ADMIN_TOKEN is not set");
    await deadLetterCommand(baseUrl, token, args[1], args.slice(2));
  } else if (cmd === "agents" || cmd === "posts" || cmd === "comments" || cmd === "review") {
    const token = process.env.APS_ADMIN_TOKEN;
    if (!token) throw new Error("APS_ADMIN_TOKEN is not set");
    if (!(await moderationCommand(baseUrl, token, cmd, args))) {
      console.error(USAGE);
      process.exitCode = 2;
    }
  } else if (cmd === "audit" && args[0] === "verify" && args.length === 1) {
    const token = process.env.APS_ADMIN_TOKEN;
    if (!token) throw new Error("APS_ADMIN_TOKEN is not set");
    const out = await auditVerifyCommand(baseUrl, token);
    if (out.firstBad) {
      console.error(`aps: the audit log is broken at entry ${out.firstBad.seq}: ${out.firstBad.problem}`);
      process.exitCode = 1;
    }
  } else if (cmd === "mcp" && args.length === 0) {
    await mcpCommand(process.env);
  } else if (cmd === "chart-secret") {
    chartSecretCommand(args);
  } else if (cmd === "export" || cmd === "import") {
    if (!(await (cmd === "export" ? exportCommand(args) : importCommand(args)))) {
      console.error(USAGE);
      process.exitCode = 2;
    }
  } else if (cmd === "import-peps") {
    await importPepsCommand(baseUrl, args);
  } else {
    console.error(USAGE);
    process.exitCode = 2;
  }
} catch (err) {
  console.error(`aps: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
