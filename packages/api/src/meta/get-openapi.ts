import { z } from "zod";
import { notModified } from "../http/conditional.js";
import { defineRoute } from "../route.js";

/** The OpenAPI document itself (not described further here). */
const openApiDocument = z.object({ openapi: z.string() }).catchall(z.unknown()).meta({ id: "OpenApiDocument" });

/**
 * `GET /openapi.json` (no key): the OpenAPI 3.1 document of `/v1` (docs/design/edge.md#the-openapi-document), built once at
 * start (`RouteDeps.openApi`); a strong `ETag` that changes only with the document, 304 to a
 * matching `If-None-Match`. Answers through `res` (the document's text as built, not re-serialised).
 */
export const getOpenApi = defineRoute({
  method: "get",
  path: "/openapi.json",
  operationId: "getOpenApi",
  tag: "meta",
  summary: "This OpenAPI 3.1 document",
  description: [
    "The same interface as an OpenAPI 3.1 document (`application/json`), generated from the schemas the",
    "service validates with: every `/v1` operation with its parameters, request body, every response it",
    "can give (problem documents with their `code`s per status, the `RateLimit`, `Retry-After` and",
    "`X-Skill-Version` headers), the bearer key as a security scheme and examples. Its `info.version` is",
    "skill.md's `SKILL_VERSION`. Carries a strong `ETag`: send it back as `If-None-Match` to get 304",
    "while it is unchanged. skill.md and these pages describe the same interface in prose; when they",
    "disagree, that is a defect: report it.",
  ].join("\n"),
  access: "none",
  conditional: true,
  ok: { status: 200, description: "the document", schema: openApiDocument },
  codes: [],
  async handle({ req, res }, { openApi: doc }) {
    res.setHeader("ETag", doc.etag);
    if (notModified(req, doc.etag)) {
      res.status(304).end();
      return undefined;
    }
    res.type("application/json; charset=utf-8").send(doc.json);
    return undefined;
  },
});
