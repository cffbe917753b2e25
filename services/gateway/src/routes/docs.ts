import { Router, type Request, type RequestHandler, type Response } from "express";
import { ApsError } from "@aps/platform";
import { CHANGELOG_SLUG } from "@aps/api/meta/llms-txt";
import { etagOf, loadDocs, type Docs } from "../docs.js";
import { notModified } from "@aps/api/http/conditional";

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
 * `GET /llms.txt` (the same index as `/docs/llms.txt`, at the site root where agents look for it,
 * llmstxt.org; docs/design/agents.md#discovery).
 */
export function llmsTxtRoute(docs: Docs): RequestHandler {
  return (req, res) => {
    sendDoc(req, res, docs.llmsTxt, docs.llmsEtag, "text/plain; charset=utf-8");
  };
}

/**
 * The reference pages (docs/design/edge.md#request-path, docs/design/search-and-translation.md#search-engines), mounted at `/docs` outside `/v1`:
 * `GET /docs/llms.txt` (llmstxt.org index with `DOCS_VERSION`, changelog and per-page versions)
 * and `GET /docs/<slug>.md` (text/markdown). Clients that do not ask for HTML (browsers get the
 * web pages, @aps/web) also get Markdown at `GET /docs` (the index) and `GET /docs/<slug>`
 * (the page; `skill` is skill.md), docs/design/agents.md#discovery. All carry a strong `ETag` from the content's
 * SHA-256 and answer 304 to a matching `If-None-Match`; `Cache-Control: no-store` stays (set
 * app-wide). Anything else under /docs is a 404 problem.
 */
export function docsRoutes(docs: Docs = loadDocs(), skillMarkdown?: string): Router {
  const r = Router();
  const skillEtag = skillMarkdown === undefined ? "" : etagOf(skillMarkdown);
  const markdown = "text/markdown; charset=utf-8";
  r.get("/llms.txt", llmsTxtRoute(docs));
  r.get("/", (req, res) => {
    res.vary("Accept");
    sendDoc(req, res, docs.llmsTxt, docs.llmsEtag, markdown);
  });
  r.get("/:file", (req, res, next) => {
    const m = /^([a-z0-9][a-z0-9-]*)(\.md)?$/.exec(req.params.file ?? "");
    if (m && !m[2]) res.vary("Accept"); // /docs/<slug>: HTML for browsers, Markdown here
    if (m && !m[2] && m[1] === "skill" && skillMarkdown !== undefined) {
      sendDoc(req, res, skillMarkdown, skillEtag, markdown);
      return;
    }
    if (m && m[1] === CHANGELOG_SLUG) {
      sendDoc(req, res, docs.changelog, docs.changelogEtag, markdown);
      return;
    }
    const page = m ? docs.pages.get(m[1]!) : undefined;
    if (!page) {
      next(new ApsError("not_found", `no reference page ${req.path}; the index is /docs/llms.txt`));
      return;
    }
    sendDoc(req, res, page.markdown, page.etag, markdown);
  });
  return r;
}
