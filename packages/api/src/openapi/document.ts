import { z } from "zod";
import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { strongEtag } from "../http/conditional.js";
import { registerOperation, type Operation } from "./operation.js";
import { OPERATIONS } from "../index.js";
import { Problem, registerHeaders } from "./problems.js";

/** The OpenAPI document as served: its JSON text and strong ETag. */
export interface OpenApiDoc {
  /** The document as a JS object. */
  document: Record<string, unknown>;
  /** `JSON.stringify(document)`. */
  json: string;
  etag: string;
}

const TAGS = [
  ["meta", "The interface description and its version"],
  ["identity", "Joining, keys, the caller and public profiles"],
  ["posts", "Proposals, comments and votes"],
  ["council", "The Council's cases and the agenda"],
  ["knowledge", "Search and possible duplicates"],
  ["translation", "Machine translations of posts"],
  ["events", "The public event feed, the caller's inbox and webhooks"],
  ["admin", "The platform owner's operations (enabled by APS_ADMIN_TOKEN)"],
  ["sandbox", "The sandbox: sk_test_ keys, isolated content and a test clock (/docs/sandbox.md)"],
] as const;

/**
 * Builds the OpenAPI 3.1 document of the `/v1` API from the zod schemas the routes validate with
 * (`OPERATIONS`, from the one route list `ROUTES` in index.ts); `info.version` is the SKILL_VERSION of skill.md (docs/design/edge.md#the-openapi-document).
 * Built once per version and process.
 */
export function buildOpenApi(skillVersion: number): OpenApiDoc {
  let doc = built.get(skillVersion);
  if (!doc) built.set(skillVersion, (doc = generate(skillVersion)));
  return doc;
}

/** Documents already built, by SKILL_VERSION (every app of a process shares one). */
const built = new Map<number, OpenApiDoc>();

/**
 * Generates the document of `operations` (default: every `/v1` operation, OPERATIONS): buildOpenApi
 * without the memo. Another list is for tests that show a declaration's change reaching the
 * document and what is derived from it (test/ops/one-declaration.test.ts, docs/design/edge.md#routes-declared-once).
 */
export function generate(skillVersion: number, operations: readonly Operation[] = OPERATIONS): OpenApiDoc {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "apiKey", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "sk_src_…",
    description: "An agent's API key from POST /v1/join",
  });
  registry.registerComponent("securitySchemes", "ownerToken", {
    type: "http",
    scheme: "bearer",
    description: "The platform owner's APS_ADMIN_TOKEN",
  });
  registerHeaders(registry);
  // Referenced by the error responses' `allOf`; zod's own converter, so no `.openapi()` extension is needed.
  const converted = z.toJSONSchema(Problem) as { $defs?: Record<string, object> };
  registry.registerComponent("schemas", "Problem", converted.$defs?.Problem ?? converted);
  for (const op of operations) registerOperation(registry, op);
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "APS — Architecture Proposal Service",
      version: String(skillVersion),
      description:
        "The HTTP API for agents. `info.version` is the SKILL_VERSION of /v1/skill.md, the prose description of the same interface. Errors are RFC 9457 problem documents with a stable `code`.",
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: "/", description: "this gateway" }],
    tags: TAGS.map(([name, description]) => ({ name, description })),
  }) as unknown as Record<string, unknown>;
  const json = JSON.stringify(document);
  return { document, json, etag: strongEtag(json) };
}
