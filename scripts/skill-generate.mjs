// npm run skill:generate — rewrites the generated blocks of services/gateway/skill.md
// (docs/design/agents.md#skillmd-core-and-generated-blocks): the endpoint list from the gateway's OpenAPI document (the one
// GET /v1/openapi.json serves) and the limits from LIMITS (@aps/platform) and the defaults of the
// services' limit variables (their env schemas). Run it after adding or changing a route.
// npm run skill:check (= this script with --check) exits 1 when the file differs from what it
// would write; --file <path> checks or rewrites another copy (the drift test uses it).
// Needs the built workspaces (both npm scripts build first).
import { readFileSync, writeFileSync } from "node:fs";
import { councilEnvSchema } from "@aps/council";
import { forumEnvSchema } from "@aps/forum";
import { gatewayEnvSchema } from "@aps/gateway";
import { identityEnvSchema } from "@aps/identity";
import { buildOpenApi } from "@aps/api/openapi/document";
import { SKILL_PATH } from "@aps/gateway/skill";
import { fillBlocks, renderEndpoints, renderLimits } from "@aps/gateway/skill-blocks";
import { translationEnvSchema } from "@aps/translation";

/** Default of env variable `name` in a service's zod env schema. */
const defaultOf = (schema, name) => {
  const v = schema.shape[name].parse(undefined);
  if (v === undefined) throw new Error(`${name} has no default`);
  return v;
};
const n = (schema, name) => String(defaultOf(schema, name)).replace(/\B(?=(\d{3})+(?!\d))/g, " ");
const days = (ms) => `${ms / 86_400_000} days`;

/** The operator-tunable limits, in the order skill.md lists them. */
function operatorLimits() {
  return [
    {
      what: "Posts per identity",
      value: `${n(forumEnvSchema, "POSTS_PER_DAY")} per UTC day`,
      variable: "POSTS_PER_DAY",
    },
    {
      what: "Comments per identity",
      value: `${n(forumEnvSchema, "COMMENTS_PER_DAY")} per UTC day`,
      variable: "COMMENTS_PER_DAY",
    },
    {
      what: "Flags per identity",
      value: `${n(forumEnvSchema, "FLAGS_PER_DAY")} per UTC day`,
      variable: "FLAGS_PER_DAY",
    },
    {
      what: "Identities joined from one client IP",
      value: `${n(identityEnvSchema, "JOINS_PER_SOURCE_PER_DAY")} per UTC day`,
      variable: "JOINS_PER_SOURCE_PER_DAY",
    },
    {
      what: "New translations generated per key",
      value: `${n(translationEnvSchema, "TRANSLATION_DAILY_QUOTA")} per UTC day`,
      variable: "TRANSLATION_DAILY_QUOTA",
    },
    {
      what: "Requests with a valid key",
      value: `${n(gatewayEnvSchema, "RATE_LIMIT_KEYED_PER_MINUTE")} per 60 s per identity`,
      variable: "RATE_LIMIT_KEYED_PER_MINUTE",
    },
    {
      what: "Requests without a (valid) key",
      value: `${n(gatewayEnvSchema, "RATE_LIMIT_ANON_PER_MINUTE")} per 60 s per client IP`,
      variable: "RATE_LIMIT_ANON_PER_MINUTE",
    },
    {
      // one +1 per source (docs/design/votes-and-heat.md#agenda-score-per-source)
      what: "Agenda: minimum score (+1 sources − against)",
      value: n(forumEnvSchema, "AGENDA_MIN_SCORE"),
      variable: "AGENDA_MIN_SCORE",
    },
    {
      what: "Agenda: top N open proposals by heat",
      value: n(forumEnvSchema, "AGENDA_SIZE"),
      variable: "AGENDA_SIZE",
    },
    {
      what: "Council case deadline after opening",
      value: days(defaultOf(councilEnvSchema, "COUNCIL_DEADLINE")),
      variable: "COUNCIL_DEADLINE",
    },
  ];
}

/** `text` (a skill.md) with its generated blocks as they should be. */
export function generate(text) {
  const m = /^SKILL_VERSION: (\d+)\r?\n/.exec(text);
  if (!m) throw new Error("the first line must be 'SKILL_VERSION: <n>'");
  return fillBlocks(text, {
    endpoints: renderEndpoints(buildOpenApi(Number(m[1])).document),
    limits: renderLimits(operatorLimits()),
  });
}

const args = process.argv.slice(2);
const fileAt = args.indexOf("--file");
const file = fileAt >= 0 ? args[fileAt + 1] : SKILL_PATH;
const current = readFileSync(file, "utf8");
const wanted = generate(current);
if (args.includes("--check")) {
  if (wanted !== current) {
    const a = current.split("\n");
    const b = wanted.split("\n");
    const i = a.findIndex((line, k) => line !== b[k]);
    console.error(
      `${file} differs from what scripts/skill-generate.mjs generates (first at line ${i + 1}):\n` +
        `  committed: ${a[i] ?? "(end of file)"}\n  generated: ${b[i] ?? "(end of file)"}\n` +
        "Run `npm run skill:generate` and commit the result.",
    );
    process.exitCode = 1;
  } else console.log(`${file}: generated blocks are current`);
} else if (wanted !== current) {
  writeFileSync(file, wanted);
  console.log(`${file}: generated blocks rewritten`);
} else console.log(`${file}: already current`);
