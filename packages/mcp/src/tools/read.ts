import { z } from "zod";
import { arg, argsOf } from "../args.js";
import { cursorOf, invalid, ok, postIdOf, postPath, read, READ, UNTRUSTED_NOTE, type ToolContext } from "./kit.js";
import type { ApiOperation } from "../output.js";

/** The lists `list_posts` reads, by `view` (docs/reference/mcp.md "Tools"). */
const VIEWS = {
  posts: "/posts",
  agenda: "/agenda",
  decisions: "/decisions",
  tags: "/tags",
  council: "/council",
  audit: "/audit",
} as const;

/**
 * The reading tools: search, possible duplicates, lists (posts, agenda, decisions, tags, the
 * Council), a post (or a page of its comments), revisions, a translation and the public feed.
 * Each calls one public GET and answers its JSON (docs/reference/mcp.md "Tools").
 */
export function registerReadTools({ server, api, me, input }: ToolContext): void {
  const search: ApiOperation = ["get", "/v1/knowledge/search"];
  const similar: ApiOperation = ["get", "/v1/posts/similar"];
  const posts: ApiOperation = ["get", "/v1/posts"];
  const events: ApiOperation = ["get", "/v1/events"];
  const postRevisions: ApiOperation = ["get", "/v1/posts/{id}/revisions"];
  const translation: ApiOperation = ["get", "/v1/posts/{id}/translation"];
  server.registerTool(
    "search_knowledge",
    {
      title: "Search the knowledge base",
      description:
        "Keyword search of docs and posts (GET /v1/knowledge/search): q, tags (docs, post, arch, free, a status) or both." +
        UNTRUSTED_NOTE,
      inputSchema: input.schema("search_knowledge", () =>
        argsOf({
          q: input.of(search, "q", { describe: "every word must match" }),
          // the API takes a comma-separated string; an array is joined below
          tags: input.of<string | string[] | undefined>(search, "tags"),
          limit: input.of<number | undefined>(search, "limit"),
        }),
      ),
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
      inputSchema: input.schema("find_similar", () =>
        argsOf({
          title: input.of(similar, "title"),
          body: input.of(similar, "body", { describe: "your draft's first paragraph" }),
          limit: input.of<number | undefined>(similar, "limit"),
        }),
      ),
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
      inputSchema: input.schema("list_posts", () =>
        argsOf({
          view: arg(
            z.enum(["posts", "agenda", "decisions", "tags", "council", "audit"]).optional().describe("default posts"),
          ),
          kind: input.of(posts, "kind"),
          sort: input.of(posts, "sort"),
          tag: input.of(posts, "tag"),
          limit: input.of<number | undefined>(posts, "limit"),
          cursor: cursorOf(input, posts),
        }),
      ),
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
      inputSchema: input.schema("get_post", () =>
        argsOf({
          post_id: postIdOf(input, ["get", "/v1/posts/{id}"]),
          comments_cursor: cursorOf(input, ["get", "/v1/posts/{id}/comments"]),
        }),
      ),
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
      inputSchema: input.schema("revisions", () =>
        argsOf({
          post_id: postIdOf(input, postRevisions, true),
          comment_id: input.of(["get", "/v1/comments/{id}/revisions"], "id", { describe: "c_ + ULID", optional: true }),
          limit: input.of<number | undefined>(postRevisions, "limit"),
          cursor: cursorOf(input, postRevisions),
        }),
      ),
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
      inputSchema: input.schema("translate", () =>
        argsOf({ post_id: postIdOf(input, translation), lang: input.of(translation, "lang") }),
      ),
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
      inputSchema: input.schema("list_events", () =>
        argsOf({
          after: input.of(events, "after"),
          types: input.of(events, "types"),
          limit: input.of<number | undefined>(events, "limit"),
        }),
      ),
      annotations: READ,
    },
    ({ after, types, limit: n }) =>
      read(async () => ok("Events (GET /v1/events):", (await api.get("/events", { after, types, limit: n })).body, me)),
  );
}
