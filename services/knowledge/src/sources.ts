import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { forum } from "@aps/proto";
import { DOCS_TAG, isPostStatus, isReservedTag, movesForward, type ForumClient } from "@aps/platform";
import type { KnowledgeDoc } from "./engine.js";

/** The repository's reference pages (docs/reference, listed in index.json). */
export const DEFAULT_DOCS_DIR = fileURLToPath(new URL("../../../docs/reference/", import.meta.url));

/** Every docs page of the manifest as a document tagged `docs`. */
export function docsDocuments(dir = DEFAULT_DOCS_DIR): KnowledgeDoc[] {
  const m = JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as { pages: { slug: string; title: string }[] };
  return m.pages.map((p) => ({
    id: `doc-${p.slug}`,
    kind: "doc",
    title: p.title,
    body: readFileSync(join(dir, `${p.slug}.md`), "utf8"),
    url: `/docs/${p.slug}.md`,
    tags: [DOCS_TAG],
  }));
}

/**
 * A forum post as a document tagged `post`, its kind, its status and the post's own tags
 * (docs/reference/editing.md). A reserved word among the post's own tags (a status or kind name,
 * or `docs`: a post tagged before reserved words were refused, docs/design/edge.md#validation) is left out, so
 * `tags=adopted` finds adopted proposals only.
 */
export function postDocument(p: forum.Post, status = p.status): KnowledgeDoc {
  return {
    id: p.id,
    kind: "post",
    title: p.title,
    body: p.body,
    url: `/v1/posts/${p.id}`,
    tags: ["post", p.kind, status, ...p.tags.filter((t) => !isReservedTag(t) && t !== status)],
  };
}

/**
 * A comment as a document tagged `comment` (docs/design/search-and-translation.md#comments-in-search):
 * its body, no title (a comment has none), and the API address of the post that holds it.
 */
export function commentDocument(c: forum.Comment): KnowledgeDoc {
  return { id: c.id, kind: "comment", title: "", body: c.body, url: `/v1/posts/${c.postId}`, tags: ["comment"] };
}

/**
 * A post document's tags (as postDocument lays them out: `post`, kind, status, own tags) with its
 * status moved to `status` when that is further along the lifecycle (movesForward, docs/design/council.md#statuses-and-the-lifecycle-rule),
 * else the same tags: the index's status never goes back. Undefined when `tags` are not a post
 * document's (the post is then indexed in full, docs/design/search-and-translation.md#keeping-the-index-current).
 */
export function withStatus(tags: string[], status: string): string[] | undefined {
  const [tag, kind, current] = tags;
  if (tag !== "post" || kind === undefined || current === undefined || !isPostStatus(current)) return undefined;
  if (!movesForward(current, status)) return tags;
  return [tag, kind, status, ...tags.slice(3).filter((t) => t !== status)];
}

/**
 * The visible comments of `posts` (a page of at most 100; those with none are not asked for), 100
 * at a time in the order written, one ListComments call per 100 comments, not per post: what a
 * rebuild indexes after each page of posts (docs/design/search-and-translation.md#comments-in-search).
 */
export async function* commentsOf(client: ForumClient, posts: forum.Post[]): AsyncGenerator<forum.Comment[]> {
  const postIds = posts.filter((p) => p.commentCount > 0).map((p) => p.id);
  if (postIds.length === 0) return;
  let cursor = "";
  do {
    const page = await client.listComments({ postId: "", postIds, limit: 100, cursor });
    yield page.items.filter((c) => !c.hiddenAt);
    cursor = page.nextCursor;
  } while (cursor);
}

/** Every post of the forum, newest first, page by page. */
export async function* allPosts(client: ForumClient): AsyncGenerator<forum.Post[]> {
  let cursor = "";
  do {
    // the index needs whole bodies (lists carry excerpts by default, docs/design/edge.md#lists-and-cursors)
    const page = await client.listPosts({
      kind: "all",
      sort: "new",
      limit: 100,
      cursor,
      authorId: "",
      fullBodies: true,
    });
    yield page.items;
    cursor = page.nextCursor;
  } while (cursor);
}
