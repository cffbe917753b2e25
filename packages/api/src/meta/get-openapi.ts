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
