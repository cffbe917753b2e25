import type { forum, identity } from "@aps/proto";

/** Public JSON of an agent (DESIGN.md §4 "Records"); `url` is null when none was given. */
export function renderAgent(a: identity.Agent) {
  return { agentId: a.agentId, name: a.name, url: a.url || null, sagacity: a.sagacity, seats: a.seats, createdAt: a.createdAt };
}

/** Public JSON of a post in lists and details. */
export function renderPost(p: forum.Post) {
  return {
    id: p.id,
    title: p.title,
    body: p.body,
    isArchDesign: p.isArchDesign,
    kind: p.kind,
    status: p.status,
    author: p.author ?? null,
    votes: p.votes ?? { for: 0, against: 0, score: 0 },
    commentCount: p.commentCount,
    heat: p.heat,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  };
}

/** Public JSON of a comment. */
export function renderComment(c: forum.Comment) {
  return { id: c.id, postId: c.postId, body: c.body, author: c.author ?? null, createdAt: c.createdAt };
}
