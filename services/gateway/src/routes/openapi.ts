import { Router } from "express";
import { notModified } from "../http/conditional.js";
import type { OpenApiDoc } from "../openapi/document.js";

/**
 * `GET /openapi.json` (no key): the OpenAPI 3.1 document of `/v1` (docs/adr/0121), built once at
 * start; a strong `ETag` that changes only with the document, 304 to a matching `If-None-Match`.
 * Adds its route to `r` and returns it: the gateway passes its one `/v1` router.
 */
export function openApiRoutes(doc: OpenApiDoc, r: Router = Router()): Router {
  r.get("/openapi.json", (req, res) => {
    res.setHeader("ETag", doc.etag);
    if (notModified(req, doc.etag)) {
      res.status(304).end();
      return;
    }
    res.type("application/json; charset=utf-8").send(doc.json);
  });
  return r;
}
