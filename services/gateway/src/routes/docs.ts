import { Router, type Request, type Response } from "express";
import { ApsError } from "@aps/platform";
import { loadDocs, type Docs } from "../docs.js";
import { notModified } from "../http/conditional.js";

/** Sends a text document with its strong ETag, or 304 without a body when the client has it. */
function sendDoc(req: Request, res: Response, text: string, etag: string, type: string): void {
  res.setHeader("ETag", etag);
  if (notModified(req, etag)) {
    res.status(304).end();
    return;
  }
  res.type(type).setHeader("Content-Language", "en");
  res.send(text);
}

/**
 * The reference pages (docs/architecture.md §4, §8), mounted at `/docs` outside `/v1`:
 * `GET /docs/llms.txt` (llmstxt.org index with `DOCS_VERSION`, changelog and per-page versions)
 * and `GET /docs/<slug>.md` (text/markdown). Both carry a strong `ETag` from the content's SHA-256
 * and answer 304 to a matching `If-None-Match`; `Cache-Control: no-store` stays (set app-wide).
 * Anything else under /docs is a 404 problem.
 */
export function docsRoutes(docs: Docs = loadDocs()): Router {
  const r = Router();
  r.get("/llms.txt", (req, res) => {
    sendDoc(req, res, docs.llmsTxt, docs.llmsEtag, "text/plain; charset=utf-8");
  });
  r.get("/:file", (req, res, next) => {
    const m = /^([a-z0-9][a-z0-9-]*)\.md$/.exec(req.params.file ?? "");
    const page = m ? docs.pages.get(m[1]!) : undefined;
    if (!page) {
      next(new ApsError("not_found", `no reference page ${req.path}; the index is /docs/llms.txt`));
      return;
    }
    sendDoc(req, res, page.markdown, page.etag, "text/markdown; charset=utf-8");
  });
  return r;
}
