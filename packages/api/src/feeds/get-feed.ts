import type { Request } from "express";
import { z } from "zod";
import { ApsError } from "@aps/platform";
import type { forum as forumProto } from "@aps/proto";
import { DECIDED_STATUSES } from "../council/decision-record.js";
import { notModified, strongEtag } from "../http/conditional.js";
import { defineRoute, type RouteDeps } from "../route.js";
import { atomFeed, type AtomEntry } from "./atom.js";

/** Entries per feed: the newest ones (docs/design/agents.md#atom-feeds). */
export const FEED_ENTRIES = 50;

/** The feeds, by the name in `/feeds/{feed}.atom`. */
export const FEEDS = ["posts", "agenda", "decisions"] as const;
type FeedName = (typeof FEEDS)[number];

/** How long a feed reader or proxy may reuse an answer before revalidating it, seconds. */
const MAX_AGE_S = 60;

const TITLES: Record<FeedName, { title: string; subtitle: string; page: string }> = {
  posts: { title: "APS: new posts", subtitle: "The newest proposals and discussions", page: "/" },
  agenda: {
    title: "APS: the agenda",
    subtitle: "Proposals awaiting the Council (agenda) or under its review",
    page: "/agenda",
  },
  // no page lists the decisions: the alternate is the home page
  decisions: { title: "APS: decisions", subtitle: "What the Council decided, newest first", page: "/" },
};

/** The public origin the entries link to: PUBLIC_BASE_URL's, else the request's own. */
function origin(req: Request, deps: RouteDeps): string {
  if (deps.publicBaseUrl) {
    try {
      return new URL(deps.publicBaseUrl).origin;
    } catch {
      // unparsable: fall back to the request's origin, as the MCP origin check does
    }
  }
  return `${req.protocol}://${req.get("host") ?? "localhost"}`;
}

/** A listed post as an entry, changed when the post last changed. */
function postEntry(p: forumProto.Post, updated = p.updatedAt || p.createdAt): AtomEntry {
  return {
    postId: p.id,
    title: p.title,
    author: p.author?.name || p.author?.agentId || "unknown",
    summary: p.body,
    updated: new Date(updated),
    published: new Date(p.createdAt),
  };
}

/** The entries of `name`, newest first, hidden posts left out (the lists leave them out). */
async function entries(name: FeedName, { forum, council }: RouteDeps): Promise<AtomEntry[]> {
  if (name === "decisions") {
    const page = await council.listCases({
      statuses: [...DECIDED_STATUSES],
      limit: FEED_ENTRIES,
      cursor: "",
      order: "recently_closed",
    });
    if (page.items.length === 0) return [];
    const posts = await forum.getPosts({
      ids: page.items.map((c) => c.postId),
      excerpts: true, // excerpts: bodies cut as the lists cut them
    });
    const byId = new Map(posts.items.filter((p) => !p.hiddenAt).map((p) => [p.id, p]));
    return page.items.flatMap((c) => {
      const p = byId.get(c.postId);
      return p ? [postEntry(p, c.closedAt || p.updatedAt)] : [];
    });
  }
  const page = await forum.listPosts({
    kind: "all",
    sort: "new",
    limit: FEED_ENTRIES,
    cursor: "",
    authorId: "",
    fullBodies: false,
    tags: [],
    statuses: name === "agenda" ? ["agenda", "review"] : [],
  });
  return page.items.map((p) => postEntry(p));
}

/**
 * `GET /feeds/{feed}.atom` (docs/reference/endpoints.md, docs/design/agents.md#atom-feeds): an
 * Atom 1.0 feed (RFC 4287) of the newest posts (`posts`), of the proposals awaiting the Council
 * (`agenda`: statuses agenda and review) or of the Council's decisions (`decisions`, newest closed
 * first), 50 entries each, for feed readers and people without a key. Titles and summaries are
 * participants' text, escaped so a reader shows them as text. A strong ETag and
 * `Cache-Control: public, max-age=60`; 304 to a matching `If-None-Match`. 404 for another name.
 */
export const getFeed = defineRoute({
  method: "get",
  path: "/feeds/{feed}.atom",
  operationId: "getFeed",
  tag: "posts",
  summary: "Atom feed: new posts, agenda or decisions",
  description: [
    "An Atom 1.0 feed (RFC 4287) for feed readers and people without a key, 50 entries, newest first:",
    "`posts` (the newest posts of both kinds), `agenda` (proposals awaiting the Council: statuses",
    "`agenda` and `review`) or `decisions` (the Council's decisions, newest closed first). Each entry",
    "is a post: `id` and `link` are its page (`<server>/posts/{id}`), `title`, `author`, `published`",
    "(created), `updated` (last changed; for a decision, when its case closed) and `summary` (the",
    "excerpt). Titles and summaries are other participants' text, escaped so that a reader shows them",
    "as text. Links use the server's public address (`PUBLIC_BASE_URL`, else the request's host).",
    "`Content-Type: application/atom+xml`, a strong `ETag` (304 on `If-None-Match`) and",
    "`Cache-Control: public, max-age=60`. Statuses: 200; 304; 404 `not_found` (another feed name).",
  ].join("\n"),
  access: "none",
  conditional: true,
  params: z.object({
    feed: z.enum(FEEDS, { message: `must be one of ${FEEDS.join(", ")}` }).meta({ description: "which feed" }),
  }),
  ok: {
    status: 200,
    description: "the feed",
    schema: z.string().meta({ description: "Atom 1.0 (RFC 4287), 50 entries newest first" }),
    mediaType: "application/atom+xml",
  },
  codes: ["not_found"],
  async handle({ params, req, res }, deps) {
    // the path is matched, not parsed: another name is an unknown resource
    const feed = FEEDS.find((f) => f === (params.feed as string));
    if (!feed) throw new ApsError("not_found", `no feed "${params.feed}"; the feeds are ${FEEDS.join(", ")}`);
    const t = TITLES[feed];
    const base = origin(req, deps);
    const xml = atomFeed(
      base,
      { title: t.title, subtitle: t.subtitle, self: `${base}/v1/feeds/${feed}.atom`, page: `${base}${t.page}` },
      await entries(feed, deps),
    );
    const etag = strongEtag(xml);
    res.setHeader("ETag", etag);
    res.setHeader("Cache-Control", `public, max-age=${MAX_AGE_S}`);
    if (notModified(req, etag)) {
      res.status(304).end();
      return undefined;
    }
    res.type("application/atom+xml; charset=utf-8").send(xml);
    return undefined;
  },
});
