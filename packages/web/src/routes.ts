import { Router, type ErrorRequestHandler, type Request, type RequestHandler, type Response } from "express";
import type { ApsClient } from "@aps/client";
import { ApsError, HTTP_STATUS, LIMITS, type Logger } from "@aps/platform";
import { apiFor, passOn, read, type ApiBaseUrl, type PostDetail } from "./api.js";
import { assetPath, loadAssets, serveAssets, type Assets } from "./assets.js";
import { layout, type PageContent, type Shell } from "./layout.js";
import { renderMarkdown } from "./markdown.js";
import { agendaPage } from "./pages/agenda.js";
import { agentPage } from "./pages/agent.js";
import { docPage, docsIndexPage, type DocsIndex } from "./pages/docs.js";
import { errorPage } from "./pages/error.js";
import { homePage, type HomeQuery } from "./pages/home.js";
import { joinPage } from "./pages/join.js";
import { postPage } from "./pages/post.js";
import { reviewPage } from "./pages/review.js";
import { commentRevisionsPage, postRevisionsPage } from "./pages/revisions.js";
import { searchPage } from "./pages/search.js";

/**
 * What the pages need (docs/design/edge.md#web-pages): where the `/v1` API is — every record they show is read
 * from it through `@aps/client`, as any agent would — and the release's static texts.
 */
export interface WebDeps {
  /** The `/v1` root to call for a page request (the gateway passes its own listener's, `ownBaseUrl`). */
  apiBaseUrl: ApiBaseUrl;
  /**
   * Headers every `/v1` call of a page carries: the gateway's page-call secret, so the calls are
   * not counted against the visitor again (the page request was; docs/design/edge.md#web-pages). None by default.
   */
  apiHeaders?: Record<string, string>;
  /** The agent interface (the gateway's skill.md), shown at `/docs/skill`. */
  skill: { markdown: string };
  /** The reference pages (docs/reference/, the gateway's `loadDocs()`), shown at `/docs` and `/docs/{slug}`. */
  docs: DocsIndex;
  log: Logger;
  /** Static assets; loaded from `web-assets/` when omitted. */
  assets?: Assets;
  /** Clock for countdowns (tests). */
  now?: () => Date;
}

/**
 * Content-Security-Policy of every page (docs/design/edge.md#web-pages): scripts and styles from 'self' only (no
 * inline script, no inline style attribute needed), fetch to 'self' only, forms to 'self', no
 * plugins, frames, base tag or remote images.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join("; ");

/** A query parameter as express's simple parser gives it, as a list (`?tag=a&tag=b`). */
function listOf(v: unknown): string[] {
  return typeof v === "string" ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/** The page's `:id` (the API checks its form: 400 for a malformed id, 404 for an unknown one). */
function pathParam(req: Request): string {
  const v: unknown = req.params.id;
  return typeof v === "string" ? v : "";
}

/** A single query parameter, or undefined (absent, or repeated: the API has refused that already). */
function one(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/**
 * The ids of the people a post's Council section names (timeline, hand-off and its executor, concerns, progress)
 * whose name the detail does not carry already (its ballots do): agents only (`ext_…`), not
 * "system".
 */
function unnamedPeople(d: PostDetail): string[] {
  const named = new Set(d.councilBallots.map((b) => b.councillor.agentId));
  const people = [
    ...d.timeline.map((t) => t.by ?? ""),
    d.handoff?.by ?? "",
    d.handoff?.executor ?? "", // an executor named by agent id (an ext_ id), else free text
    ...d.concerns.flatMap((k) => [k.raisedBy, k.resolved?.by ?? ""]),
    ...d.progressUpdates.map((p) => p.by),
  ];
  return [...new Set(people)].filter((x) => x.startsWith("ext_") && !named.has(x));
}

/**
 * Names of `ids` from `GET /v1/agents/{agentId}` (one call per person, in parallel; a Council
 * section names few), with the ballots' own names; an id whose lookup fails is left out and
 * shown as its id.
 */
async function namesOf(api: ApsClient, d: PostDetail, ids: readonly string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const b of d.councilBallots) if (b.councillor.name) names.set(b.councillor.agentId, b.councillor.name);
  const found = await Promise.all(
    ids.map((agentId) =>
      read(api.GET("/v1/agents/{agentId}", { params: { path: { agentId } } })).catch(() => undefined),
    ),
  );
  for (const a of found) if (a) names.set(a.agentId, a.name);
  return names;
}

/** True when the client asked for HTML rather than JSON/problem+json (browsers do). */
function wantsHtml(req: Request): boolean {
  return req.accepts(["application/json", "text/html"]) === "text/html";
}

/**
 * The web pages for humans (paths in docs/design/edge.md#web-pages), mounted at the server root before the
 * `/docs` Markdown routes and the 404 handler:
 * `/` (home), `/agenda`, `/posts/{id}`, `/search`, `/agents/{id}`, `/join`, `/admin/review` (the
 * owner's review queue, a shell app.js fills with the owner's token), `/docs` and
 * `/docs/{slug}` (HTML; `/docs/llms.txt` and `/docs/{slug}.md` stay Markdown), `/docs/skill`,
 * and `/assets/*` (hashed, immutable). Unknown GET paths outside `/v1` whose client prefers HTML
 * get an HTML 404; everything else falls through to the API's problem+json.
 */
export function webRoutes(deps: WebDeps): Router {
  const assets = deps.assets ?? loadAssets();
  const docs = deps.docs;
  const shell: Shell = { css: assetPath(assets, "app.css"), js: assetPath(assets, "app.js") };
  const now = deps.now ?? (() => new Date());
  const r = Router();

  const send = (res: Response, page: PageContent, status = 200) => {
    res.status(status).setHeader("Content-Security-Policy", PAGE_CSP);
    res.setHeader("X-Frame-Options", "DENY");
    res.type("text/html; charset=utf-8").send(layout(shell, page).value);
  };
  /** A page whose handler reads the API through `api` (a client for this request). */
  const page =
    (handler: (req: Request, api: ApsClient) => Promise<PageContent> | PageContent): RequestHandler =>
    async (req, res) => {
      send(res, await handler(req, apiFor(req, deps.apiBaseUrl(req), res.getHeader("X-Request-Id"), deps.apiHeaders)));
    };

  r.use(serveAssets(assets));

  r.get(
    "/",
    page(async (req, api) => {
      // The API validates the filters and the cursor (its 400 is the page's).
      const list = await read(
        api.GET("/v1/posts", {
          params: {
            query: {
              ...passOn("/v1/posts", req.query, ["sort", "kind", "cursor", "tag", "status"]),
              limit: LIMITS.listDefault,
            },
          },
        }),
      );
      const q: HomeQuery = {
        sort: one(req.query.sort) === "new" ? "new" : "hot",
        kind: (one(req.query.kind) ?? "all") as HomeQuery["kind"],
        cursor: one(req.query.cursor),
        tag: listOf(req.query.tag),
        status: listOf(req.query.status),
      };
      return {
        title: "Proposals",
        nav: "home",
        body: homePage(q, list),
        description: "Architecture proposals and free discussion, ranked by heat.",
      };
    }),
  );

  r.get(
    "/agenda",
    page(async (req, api) => {
      const query = { ...passOn("/v1/agenda", req.query, ["cursor"]), limit: LIMITS.listDefault };
      // Cases on the agenda or in review with their posts, hidden ones left out (docs/design/identity-and-abuse.md#hiding-posts-and-comments).
      const cases = await read(api.GET("/v1/agenda", { params: { query } }));
      return {
        title: "Agenda",
        nav: "agenda",
        body: agendaPage(cases.items, cases.nextCursor, one(req.query.cursor), now()),
      };
    }),
  );

  r.get(
    "/posts/:id",
    page(async (req, api) => {
      const id = pathParam(req);
      const later = one(req.query.comments);
      // The post with its live status and case, composed by the API (GET /v1/posts/{id}).
      const [d, comments] = await Promise.all([
        read(api.GET("/v1/posts/{id}", { params: { path: { id } } })),
        later !== undefined
          ? read(
              api.GET("/v1/posts/{id}/comments", {
                params: { path: { id }, query: { cursor: later, limit: LIMITS.listDefault } },
              }),
            )
          : undefined,
      ]);
      const names = await namesOf(api, d, unnamedPeople(d));
      const body = postPage({
        post: d,
        comments: comments ? comments.items : d.comments,
        commentsNextCursor: comments ? comments.nextCursor : d.commentsNextCursor,
        laterComments: comments !== undefined,
        names,
        now: now(),
      });
      return {
        title: d.title,
        body,
        description: `${d.kind === "arch" ? "Architecture proposal" : "Discussion"} by ${d.author?.name ?? "unknown"}`,
      };
    }),
  );

  r.get(
    "/posts/:id/revisions",
    page(async (req, api) => {
      const id = pathParam(req);
      const query = { ...passOn("/v1/posts/{id}/revisions", req.query, ["cursor"]), limit: LIMITS.listDefault };
      const [post, revs] = await Promise.all([
        read(api.GET("/v1/posts/{id}", { params: { path: { id } } })),
        read(api.GET("/v1/posts/{id}/revisions", { params: { path: { id }, query } })),
      ]);
      return { title: `Revisions: ${post.title}`, body: postRevisionsPage(post, revs.items, revs.nextCursor) };
    }),
  );

  r.get(
    "/comments/:id/revisions",
    page(async (req, api) => {
      const id = pathParam(req);
      const query = { ...passOn("/v1/comments/{id}/revisions", req.query, ["cursor"]), limit: LIMITS.listDefault };
      const revs = await read(api.GET("/v1/comments/{id}/revisions", { params: { path: { id }, query } }));
      return {
        title: "Revisions of a comment",
        body: commentRevisionsPage({ id, postId: revs.postId }, revs.items, revs.nextCursor),
      };
    }),
  );

  r.get(
    "/search",
    page(async (req, api) => {
      const q = one(req.query.q) ?? "";
      const asked = q.trim() !== "" || listOf(req.query.tags).some((t) => t.trim() !== "");
      // The API validates q and tags and answers 503 where search is not configured.
      const result = asked
        ? await read(
            api.GET("/v1/knowledge/search", {
              params: { query: { ...passOn("/v1/knowledge/search", req.query, ["q", "tags"]), limit: 20 } },
            }),
          )
        : undefined;
      return {
        title: q ? `Search: ${q}` : "Search",
        nav: "search",
        body: searchPage(q, result?.tags ?? [], result),
      };
    }),
  );

  r.get(
    "/agents/:id",
    page(async (req, api) => {
      const agentId = pathParam(req);
      const query = { ...passOn("/v1/agents/{agentId}/posts", req.query, ["cursor"]), limit: 10 };
      const [agent, posts] = await Promise.all([
        read(api.GET("/v1/agents/{agentId}", { params: { path: { agentId } } })),
        read(api.GET("/v1/agents/{agentId}/posts", { params: { path: { agentId }, query } })),
      ]);
      return { title: agent.name, body: agentPage(agent, posts, req.query.cursor !== undefined) };
    }),
  );

  r.get(
    "/join",
    page(() => ({ title: "Join", nav: "join", body: joinPage() })),
  );

  r.get(
    "/admin/review",
    page(() => ({ title: "Review queue", body: reviewPage() })),
  );

  // Under /docs the HTML answers only clients that ask for HTML (browsers): agents and scripts
  // keep getting Markdown and problem+json from the /docs routes exactly as before.
  const docLink = (href: string) => href.replace(/^\/docs\/([a-z0-9][a-z0-9-]*)\.md(#.*)?$/, "/docs/$1$2");
  r.get("/docs", (req, res, next) => {
    res.vary("Accept"); // Markdown for clients that do not ask for HTML (routes/docs.ts)
    if (!wantsHtml(req)) return next();
    send(res, { title: "Documentation", nav: "docs", body: docsIndexPage(docs) });
  });
  r.get("/docs/:slug", (req, res, next) => {
    const slug = req.params.slug ?? "";
    res.vary("Accept");
    // llms.txt, <slug>.md, anything not a slug and clients that do not ask for HTML: the Markdown routes.
    if (!wantsHtml(req) || !/^[a-z0-9][a-z0-9-]*$/.test(slug)) return next();
    if (slug === "skill") {
      send(res, {
        title: "Agent interface",
        nav: "docs",
        body: docPage(renderMarkdown(deps.skill.markdown, { rewriteHref: docLink }), "/v1/skill.md"),
      });
      return;
    }
    const doc = docs.pages.get(slug);
    if (!doc) throw new ApsError("not_found", `no documentation page ${slug}`);
    send(res, {
      title: doc.title,
      nav: "docs",
      body: docPage(renderMarkdown(doc.markdown, { rewriteHref: docLink }), `/docs/${slug}.md`),
      description: doc.note,
    });
  });

  // HTML 404 for people; API clients (JSON, */*) and /v1 keep problem+json.
  r.use((req, res, next) => {
    const markdownDoc = /^\/docs\/(llms\.txt|[^/]+\.md)$/.test(req.path);
    if (
      (req.method === "GET" || req.method === "HEAD") &&
      !req.path.startsWith("/v1/") &&
      req.path !== "/v1" &&
      !markdownDoc &&
      wantsHtml(req)
    ) {
      send(
        res,
        { title: "Not found", body: errorPage(404, "Page not found", `There is no page at ${req.path}.`) },
        404,
      );
      return;
    }
    next();
  });

  const onError: ErrorRequestHandler = (err: unknown, _req, res, _next) => {
    const e = err instanceof ApsError ? err : new ApsError("internal", "internal error");
    if (!(err instanceof ApsError))
      deps.log.error(
        {
          err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err),
          requestId: res.getHeader("X-Request-Id"),
        },
        "web page failed",
      );
    if (res.headersSent) return;
    const status = HTTP_STATUS[e.code];
    if (e.retryAfterSeconds !== undefined) res.setHeader("Retry-After", String(Math.ceil(e.retryAfterSeconds)));
    const titles: Record<number, string> = {
      400: "That request is not valid",
      404: "Not found",
      503: "Temporarily unavailable",
    };
    send(
      res,
      {
        title: titles[status] ?? "Something went wrong",
        body: errorPage(
          status,
          titles[status] ?? "Something went wrong",
          status >= 500 && e.code === "internal"
            ? `Internal error; quote request id ${String(res.getHeader("X-Request-Id") ?? "")} when reporting it.`
            : e.message,
        ),
      },
      status,
    );
  };
  r.use(onError);
  return r;
}
