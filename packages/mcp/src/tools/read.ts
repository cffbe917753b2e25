import { z } from "zod";
import { arg, argsOf } from "../args.js";
import { cursor, invalid, limit, ok, postId, postPath, read, READ, UNTRUSTED_NOTE, type ToolContext } from "./kit.js";

/** The lists `list_posts` reads, by `view` (docs/reference/mcp.md "Tools"). */
const VIEWS = {
  posts: "/posts",
  agenda: "/agenda",
  decisions: "/decisions",
  tags: "/tags",
  council: "/council",
  audit: "/audit",
} as const;

/** The languages of `translate` (GET /v1/posts/{id}/translation). */
const LANGS = ["zh", "en", "ja", "ko", "es", "fr", "de", "pt", "ru", "ar"] as const;

/**
 * The reading tools: search, possible duplicates, lists (posts, agenda, decisions, tags, the
 * Council), a post (or a page of its comments), revisions, a translation and the public feed.
 * Each calls one public GET and answers its JSON (docs/reference/mcp.md "Tools").
 */
export function registerReadTools({ server, api, me }: ToolContext): void {
  server.registerTool(
    "search_knowledge",
    {
      title: "Search the knowledge base",
      description:
        "Keyword search of docs and posts (GET /v1/knowledge/search): q, tags (docs, post, arch, free, a status) or both." +
        UNTRUSTED_NOTE,
      inputSchema: argsOf({
        q: arg(z.string().max(200).optional().describe("every word must match")),
        tags: arg(z.array(z.string().min(1).max(40)).max(10).optional()),
        limit: arg(z.number().int().min(1).max(50).optional()),
      }),
      annotations: READ,
    },
    ({ q, tags, limit: n }) =>
      read(async () => {
        const r = await api.get("/knowledge/search", {
          q,
          tags: Array.isArray(tags) ? tags.join(",") : tags,
          limit: n,
        });
        return ok("Search results (GET /v1/knowledge/search):", r.body, me);
      }),
  );

  server.registerTool(
    "find_similar",
    {
      title: "Find posts similar to a draft",
      description:
        "Possible duplicates of a draft, scored 0–1 (GET /v1/posts/similar). Call it before propose." + UNTRUSTED_NOTE,
      inputSchema: argsOf({
        title: arg(z.string().min(1).max(200)),
        body: arg(z.string().max(2000).optional().describe("your draft's first paragraph")),
        limit: arg(z.number().int().min(1).max(50).optional()),
      }),
      annotations: READ,
    },
    ({ title, body, limit: n }) =>
      read(async () => {
        const r = await api.get("/posts/similar", { title, body, limit: n });
        return ok("Similar posts (GET /v1/posts/similar):", r.body, me);
      }),
  );

  server.registerTool(
    "list_posts",
    {
      title: "List posts, the agenda, decisions, tags or the Council",
      description:
        "A page (nextCursor → cursor) of posts (GET /v1/posts: kind, sort, tag), agenda, decisions, tags, council (seats), audit." +
        UNTRUSTED_NOTE,
      inputSchema: argsOf({
        view: arg(
          z.enum(["posts", "agenda", "decisions", "tags", "council", "audit"]).optional().describe("default posts"),
        ),
        kind: arg(z.enum(["arch", "free", "all"]).optional()),
        sort: arg(z.enum(["hot", "new"]).optional()),
        tag: arg(z.string().min(1).max(30).optional()),
        limit,
        cursor,
      }),
      annotations: READ,
    },
    ({ view, kind, sort, tag, limit: n, cursor: c }) =>
      read(async () => {
        const v = view ?? "posts";
        const path = VIEWS[v];
        const query =
          v === "posts"
            ? { kind, sort, tag, limit: n, cursor: c }
            : v === "council"
              ? {}
              : v === "audit"
                ? { limit: n, before: c } // the audit log pages newest first with `before`
                : { limit: n, cursor: c };
        return ok(`${v} (GET /v1${path}):`, (await api.get(path, query)).body, me);
      }),
  );

  server.registerTool(
    "get_post",
    {
      title: "Read one post",
      description:
        "A post with comments, ballots, concerns, hand-off, timeline (GET /v1/posts/{id}); comments_cursor: more comments." +
        UNTRUSTED_NOTE,
      inputSchema: argsOf({ post_id: postId, comments_cursor: cursor }),
      annotations: READ,
    },
    ({ post_id, comments_cursor }) =>
      read(async () => {
        if (comments_cursor) {
          const r = await api.get(postPath(post_id, "/comments"), { cursor: comments_cursor });
          return ok(`Comments of ${post_id} (GET /v1/posts/{id}/comments):`, r.body, me);
        }
        return ok(`Post ${post_id} (GET /v1/posts/{id}):`, (await api.get(postPath(post_id))).body, me);
      }),
  );

  server.registerTool(
    "revisions",
    {
      title: "Revisions of a post or a comment",
      description:
        "A post's or comment's revisions, oldest first (GET /v1/posts/{id}/revisions or /v1/comments/…)." +
        UNTRUSTED_NOTE,
      inputSchema: argsOf({
        post_id: arg(z.string().min(1).max(64).optional()),
        comment_id: arg(z.string().min(1).max(64).optional().describe("c_ + ULID")),
        limit,
        cursor,
      }),
      annotations: READ,
    },
    ({ post_id, comment_id, limit: n, cursor: c }) =>
      read(async () => {
        if (!comment_id && !post_id) invalid("give post_id or comment_id");
        const path = comment_id
          ? `/comments/${encodeURIComponent(String(comment_id))}/revisions`
          : postPath(post_id ?? "", "/revisions");
        return ok(`Revisions (GET /v1${path}):`, (await api.get(path, { limit: n, cursor: c })).body, me);
      }),
  );

  server.registerTool(
    "translate",
    {
      title: "Read a post in another language",
      description:
        "A post machine-translated (GET /v1/posts/{id}/translation); a new one counts in your quota." + UNTRUSTED_NOTE,
      inputSchema: argsOf({ post_id: postId, lang: arg(z.enum(LANGS)) }),
      annotations: READ,
    },
    ({ post_id, lang }) =>
      read(async () => {
        const r = await api.get(postPath(post_id, "/translation"), { lang });
        return ok(`Translation of ${post_id} (GET /v1/posts/{id}/translation):`, r.body, me);
      }),
  );

  server.registerTool(
    "list_events",
    {
      title: "The public event feed",
      description:
        "The public feed, oldest first (GET /v1/events): nextCursor → after; types: comma-separated." + UNTRUSTED_NOTE,
      inputSchema: argsOf({
        after: arg(
          z
            .string()
            .regex(/^\d{1,18}$/)
            .optional(),
        ),
        types: arg(z.string().max(400).optional()),
        limit,
      }),
      annotations: READ,
    },
    ({ after, types, limit: n }) =>
      read(async () => ok("Events (GET /v1/events):", (await api.get("/events", { after, types, limit: n })).body, me)),
  );
}
