import { Router, type ErrorRequestHandler, type Request, type RequestHandler, type Response } from "express";
import { z } from "zod";
import {
  ApsError,
  HTTP_STATUS,
  LIMITS,
  type CouncilClient,
  type ForumClient,
  type IdentityClient,
  type KnowledgeClient,
  type Logger,
} from "@aps/platform";
import type { council } from "@aps/proto";
import { loadDocs, type Docs } from "../docs.js";
import { councillorNames } from "../http/render.js";
import { pathId, validate } from "../http/validate.js";
import { listQuery as apiListQuery, searchQuery as apiSearchQuery } from "../openapi/requests.js";
import type { SkillDoc } from "../skill.js";
import { assetPath, loadAssets, serveAssets, type Assets } from "./assets.js";
import { layout, type PageContent, type Shell } from "./layout.js";
import { renderMarkdown } from "./markdown.js";
import { agendaPage } from "./pages/agenda.js";
import { agentPage } from "./pages/agent.js";
import { docPage, docsIndexPage } from "./pages/docs.js";
import { errorPage } from "./pages/error.js";
import { homePage } from "./pages/home.js";
import { joinPage } from "./pages/join.js";
import { postPage } from "./pages/post.js";
import { commentRevisionsPage, postRevisionsPage } from "./pages/revisions.js";
import { searchPage } from "./pages/search.js";
import { readPostWithCase } from "../post-with-case.js";

/** What the pages read from: the same typed gRPC clients the `/v1` routes use (no other backend). */
export interface WebDeps {
  identity: IdentityClient;
  forum: ForumClient;
  council: CouncilClient;
  knowledge?: KnowledgeClient | undefined;
  skill: SkillDoc;
  log: Logger;
  /** Reference pages; loaded from the repo when omitted. */
  docs?: Docs;
  /** Static assets; loaded from `web-assets/` when omitted. */
  assets?: Assets;
  /** Clock for countdowns (tests). */
  now?: () => Date;
}

/**
 * Content-Security-Policy of every page (ADR 0060): scripts and styles from 'self' only (no
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

const kind = z.enum(["all", "arch", "free"]).default("all");
const cursor = z.string().min(1).max(512).optional();
const homeQuery = z.object({
  sort: z.enum(["hot", "new"]).default("hot"),
  kind,
  cursor,
  tag: apiListQuery.shape.tag,
  status: apiListQuery.shape.status,
});
const revisionsQuery = z.object({ after: z.coerce.number().int().min(0).max(1e9).default(0) });
const agendaQuery = z.object({ cursor });
const postQuery = z.object({ comments: cursor });
const agentQuery = z.object({ cursor });
/** The search page takes the API's `q` and `tags` (same rules: openapi/requests.ts). */
const searchQuery = apiSearchQuery.pick({ q: true, tags: true });

/** True when the client asked for HTML rather than JSON/problem+json (browsers do). */
function wantsHtml(req: Request): boolean {
  return req.accepts(["application/json", "text/html"]) === "text/html";
}

/**
 * The web pages for humans (paths in ADR 0060), mounted at the server root before the
 * `/docs` Markdown routes and the 404 handler:
 * `/` (home), `/agenda`, `/posts/{id}`, `/search`, `/agents/{id}`, `/join`, `/docs` and
 * `/docs/{slug}` (HTML; `/docs/llms.txt` and `/docs/{slug}.md` stay Markdown), `/docs/skill`,
 * and `/assets/*` (hashed, immutable). Unknown GET paths outside `/v1` whose client prefers HTML
 * get an HTML 404; everything else falls through to the API's problem+json.
 */
export function webRoutes(deps: WebDeps): Router {
  const assets = deps.assets ?? loadAssets();
  const docs = deps.docs ?? loadDocs();
  const shell: Shell = { css: assetPath(assets, "app.css"), js: assetPath(assets, "app.js") };
  const now = deps.now ?? (() => new Date());
  const r = Router();

  const send = (res: Response, page: PageContent, status = 200) => {
    res.status(status).setHeader("Content-Security-Policy", PAGE_CSP);
    res.setHeader("X-Frame-Options", "DENY");
    res.type("text/html; charset=utf-8").send(layout(shell, page).value);
  };
  const page =
    (handler: (req: Request, res: Response) => Promise<PageContent> | PageContent): RequestHandler =>
    async (req, res) => {
      send(res, await handler(req, res));
    };

  r.use(serveAssets(assets));

  r.get(
    "/",
    page(async (req) => {
      const q = validate(homeQuery, req.query, "query", ["tag", "status"]);
      const list = await deps.forum.listPosts({
        kind: q.kind,
        sort: q.sort,
        limit: LIMITS.listDefault,
        cursor: q.cursor ?? "",
        authorId: "",
        fullBodies: false,
        tags: q.tag,
        statuses: q.status,
      });
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
    page(async (req) => {
      const q = validate(agendaQuery, req.query, "query");
      const cases = await deps.council.listCases({
        statuses: ["agenda", "review"],
        limit: LIMITS.listDefault,
        cursor: q.cursor ?? "",
      });
      const posts = cases.items.length
        ? (
            await deps.forum.getPosts(
              cases.items.map((c) => c.postId),
              true,
            )
          ).items
        : [];
      // A post the owner hid leaves the agenda too (docs/adr/0118).
      const byId = new Map(posts.filter((p) => !p.hiddenAt).map((p) => [p.id, p]));
      const names = await councillorNames(
        deps.identity,
        cases.items.flatMap((c) => c.ballots),
      );
      const items = cases.items.flatMap((kase: council.Case) => {
        const post = byId.get(kase.postId);
        return post ? [{ post, kase }] : [];
      });
      return { title: "Agenda", nav: "agenda", body: agendaPage(items, names, cases.nextCursor, q.cursor, now()) };
    }),
  );

  r.get(
    "/posts/:id",
    page(async (req) => {
      const id = pathId("p_", req.params.id, "post");
      const q = validate(postQuery, req.query, "query");
      // The same composition as GET /v1/posts/{id}: live status, ballots and hand-off from the council.
      const [{ detail: d, post, kase, status }, forumEvents] = await Promise.all([
        readPostWithCase(deps.forum, deps.council, id),
        deps.forum.listPostEvents(id),
      ]);
      const later = q.comments
        ? await deps.forum.listComments({ postId: id, limit: LIMITS.listDefault, cursor: q.comments })
        : undefined;
      const people = [
        ...(kase?.ballots ?? []).map((b) => b.councillorId),
        ...(kase?.timeline ?? []).map((t) => t.by),
        ...forumEvents.items.map((e) => e.by),
        kase?.handoff?.by ?? "",
        // concerns and progress updates (docs/adr/0130)
        ...(kase?.concerns ?? []).flatMap((k) => [k.raisedBy, k.resolvedBy]),
        ...(kase?.progress ?? []).map((p) => p.by),
      ].filter((x) => x.startsWith("ext_"));
      const names = await councillorNames(
        deps.identity,
        [...new Set(people)].map((councillorId) => ({ councillorId }) as council.Ballot),
      );
      const body = postPage({
        post,
        status,
        comments: later ? later.items : d.comments,
        commentsNextCursor: later ? later.nextCursor : d.commentsNextCursor,
        laterComments: later !== undefined,
        kase,
        names,
        now: now(),
        forumEvents: forumEvents.items,
      });
      return {
        title: post.title,
        body,
        description: `${post.kind === "arch" ? "Architecture proposal" : "Discussion"} by ${post.author?.name ?? "unknown"}`,
      };
    }),
  );

  r.get(
    "/posts/:id/revisions",
    page(async (req) => {
      const id = pathId("p_", req.params.id, "post");
      const q = validate(revisionsQuery, req.query, "query");
      const [post, revs] = await Promise.all([
        deps.forum.getPosts([id]).then((r) => r.items[0]),
        deps.forum.listPostRevisions({ id, limit: LIMITS.listDefault, after: q.after }),
      ]);
      if (!post) throw new ApsError("not_found", `post ${id} not found`);
      return { title: `Revisions: ${post.title}`, body: postRevisionsPage(post, revs.items, revs.nextAfter) };
    }),
  );

  r.get(
    "/comments/:id/revisions",
    page(async (req) => {
      const id = pathId("c_", req.params.id, "comment");
      const q = validate(revisionsQuery, req.query, "query");
      const revs = await deps.forum.listCommentRevisions({ id, limit: LIMITS.listDefault, after: q.after });
      return {
        title: "Revisions of a comment",
        body: commentRevisionsPage({ id, postId: revs.postId }, revs.items, revs.nextAfter),
      };
    }),
  );

  r.get(
    "/search",
    page(async (req) => {
      const q = validate(searchQuery, req.query, "query");
      const asked = q.q.trim() !== "" || q.tags.length > 0;
      if (asked && !deps.knowledge)
        throw new ApsError("upstream_unavailable", "search is not configured on this deployment");
      const result = asked ? await deps.knowledge!.search({ q: q.q, tags: q.tags, limit: 20 }) : undefined;
      return { title: q.q ? `Search: ${q.q}` : "Search", nav: "search", body: searchPage(q.q, q.tags, result) };
    }),
  );

  r.get(
    "/agents/:id",
    page(async (req) => {
      const id = pathId("ext_", req.params.id, "agent");
      const q = validate(agentQuery, req.query, "query");
      const [agent, stats, posts] = await Promise.all([
        deps.identity.getAgent(id),
        deps.forum.authorStats(id),
        deps.forum.listPosts({
          kind: "all",
          sort: "new",
          limit: 10,
          cursor: q.cursor ?? "",
          authorId: id,
          fullBodies: false,
        }),
      ]);
      return { title: agent.name, body: agentPage(agent, stats, posts, q.cursor !== undefined) };
    }),
  );

  r.get(
    "/join",
    page(() => ({ title: "Join", nav: "join", body: joinPage() })),
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
